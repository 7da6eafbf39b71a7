// The dashboard's time series with uPlot, loaded as its own chunk when a dashboard first draws (the rest of the Hub
// never downloads it). Bars per day or week, credits and contributions stacked: the contributions bar is drawn at the
// bucket's total and the credits bar over its lower part. The table beside it (a toggle) is the text alternative.
import uPlot from 'uplot'

export interface BarSeries {
  /** Bucket starts, in seconds since the epoch. */
  starts: number[]
  credits: number[]
  contributions: number[]
  format: (value: number) => string
  /** Called with the bucket's index when a bar is clicked. */
  onPick: (index: number) => void
  label: string
}

export function drawBars(target: HTMLElement, series: BarSeries): () => void {
  const totals = series.credits.map((c, i) => c + (series.contributions[i] ?? 0))
  const bars = uPlot.paths.bars?.({ size: [0.7, 48], align: 0 })
  const width = () => Math.max(280, target.clientWidth)
  const plot = new uPlot(
    {
      width: width(),
      height: 260,
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{}, { values: (_u, ticks) => ticks.map(series.format), size: 80 }],
      series: [
        { label: 'Period' },
        {
          label: 'Contributions',
          fill: '#8fbfa8',
          stroke: '#3f7a5f',
          width: 1,
          ...(bars ? { paths: bars } : {}),
          points: { show: false },
          value: (_u, _v, _s, index) => (index === null ? '—' : series.format(series.contributions[index] ?? 0)),
        },
        {
          label: 'Credits',
          fill: '#1f5c46',
          stroke: '#143d2f',
          width: 1,
          ...(bars ? { paths: bars } : {}),
          points: { show: false },
          value: (_u, v) => (v === null ? '—' : series.format(v)),
        },
      ],
    },
    [series.starts, totals, series.credits],
    target,
  )
  plot.root.setAttribute('aria-hidden', 'true')
  const pick = () => {
    const index = plot.cursor.idx
    if (index !== null && index !== undefined) series.onPick(index)
  }
  plot.over.addEventListener('click', pick)
  plot.over.style.cursor = 'pointer'
  const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }))
  resize.observe(target)
  return () => {
    resize.disconnect()
    plot.over.removeEventListener('click', pick)
    plot.destroy()
  }
}
