// The widget's stylesheet, adopted by every shadow root as a constructed stylesheet (never a <style>
// element or a style attribute, so the page's style-src does not apply). Theming goes through the
// --canopy-* custom properties; appearance.ts writes them in a second sheet.
export const BASE_CSS = `
:host{--canopy-color-primary:#0b6e4f;--canopy-color-on-primary:#fff;--canopy-color-background:#fff;--canopy-color-text:#1a1a1a;--canopy-font-family:inherit;--canopy-border-radius:8px;display:block;font-family:var(--canopy-font-family);line-height:1.5;color:var(--canopy-color-text)}
:host([hidden]){display:none}
*{box-sizing:border-box}
.root{display:grid;gap:.75rem;padding:1rem;max-width:100%;overflow-wrap:anywhere;background:var(--canopy-color-background);color:var(--canopy-color-text);border:1px solid currentColor;border-radius:var(--canopy-border-radius)}
h2,h3,p,ul{margin:0}
h2{font-size:1.125rem}
h3{font-size:1rem}
ul{padding-inline-start:1.25rem}
h2:focus{outline:none}
.head,.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.head{justify-content:space-between;flex-wrap:nowrap;align-items:flex-start}
.small,.disclosure{font-size:.875rem}
.disclosure{border-top:1px solid currentColor;padding-top:.75rem}
.summary{font-weight:600}
.partners{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.75rem}
.partner{display:flex;gap:.5rem;align-items:center;flex:1 1 14rem}
.partner img{flex:none;width:40px;height:40px;object-fit:contain;border-radius:4px}
button{font:inherit;color:inherit;cursor:pointer;min-height:44px;min-width:44px;border-radius:var(--canopy-border-radius)}
button:focus-visible{outline:3px solid var(--canopy-color-text);outline-offset:2px}
.switch{display:flex;gap:.75rem;align-items:center;padding:.25rem 0;border:0;background:none;text-align:start}
.track{flex:none;position:relative;width:44px;height:24px;border:2px solid currentColor;border-radius:12px}
.track::after{content:"";position:absolute;top:2px;left:2px;width:16px;height:16px;border-radius:50%;background:currentColor}
[aria-checked=true] .track{background:var(--canopy-color-primary);border-color:var(--canopy-color-primary)}
[aria-checked=true] .track::after{left:22px;background:var(--canopy-color-on-primary)}
.options{display:flex;flex-wrap:wrap;gap:.5rem}
.option,.secondary{padding:.5rem 1rem;border:2px solid currentColor;background:var(--canopy-color-background)}
.option[aria-pressed=true]{background:var(--canopy-color-primary);border-color:var(--canopy-color-primary);color:var(--canopy-color-on-primary)}
.tick{display:none}
.option[aria-pressed=true] .tick{display:inline}
.confirm{padding:.5rem 1.25rem;font-weight:600;border:2px solid var(--canopy-color-primary);background:var(--canopy-color-primary);color:var(--canopy-color-on-primary)}
.confirm[aria-disabled=true]{cursor:not-allowed;opacity:.7}
.close{padding:0;border:2px solid transparent;background:none;font-size:1.5rem;line-height:1}
.skeleton{min-height:14rem;border-radius:var(--canopy-border-radius);background:currentColor;opacity:.08}
.skeleton.checkout{min-height:8rem}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
dialog{width:100%;max-width:min(40rem,calc(100% - 2rem));max-height:calc(100% - 2rem);padding:0;border:0;overflow:auto;background:transparent;color:inherit;border-radius:var(--canopy-border-radius)}
dialog::backdrop{background:rgb(0 0 0/.6)}
dialog .root{padding:1.5rem}
@media (prefers-reduced-motion:no-preference){.track::after{transition:left .15s}.skeleton{animation:canopy-pulse 1.5s ease-in-out infinite}}
@keyframes canopy-pulse{50%{opacity:.16}}
`
