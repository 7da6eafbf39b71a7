// ECB reference-rate files for tests (synthetic figures).
// The shapes the ECB publishes: a space after each comma and a trailing comma in the daily file; ISO dates,
// N/A for currencies not published that day and a trailing comma in the historical one.
export const DAILY =
  'Date, USD, JPY, CZK, DKK, GBP, HUF, PLN, RON, SEK, CHF, ISK, NOK, TRY, AUD, BRL, CAD, CNY, HKD, IDR, ILS, INR, KRW, MXN, MYR, NZD, PHP, SGD, THB, ZAR, \n' +
  '20 November 2026, 1.1520, 178.50, 24.310, 7.4610, 0.88120, 392.10, 4.2210, 5.0890, 11.0120, 0.9310, 146.30, 11.6650, 49.120, 1.7610, 6.2110, 1.6090, 8.2750, 8.9640, 19210.10, 4.1820, 98.210, 1650.40, 21.210, 4.8720, 2.0110, 67.810, 1.4980, 37.520, 20.110, \n'

export const HISTORY =
  'Date,USD,JPY,BGN,CYP,GBP,HRK,PLN,\n' +
  '2026-11-19,1.1500,178.10,N/A,N/A,0.88000,N/A,4.2200,\n' +
  '2026-11-18,1.1480,177.90,N/A,N/A,0.87950,N/A,4.2150,\n' +
  '2007-12-31,1.4721,164.93,1.9558,0.585274,0.73335,7.3308,3.5935,\n'
