// The checkout page: the checkout widget adds the consumer's choice to the order total; "Pay" sends the choice
// to the shop's backend, which checks it, charges (a fake payment here) and allocates it with Canopy.
'use strict'
;(() => {
  const main = document.querySelector('main')
  const { orderId, sessionId, clientSecret, orderTotal, locale, contributions } = main.dataset
  const orderMinor = Math.round(Number(orderTotal) * 100)
  const format = new Intl.NumberFormat(locale, { style: 'currency', currency: 'GBP' })
  const total = document.getElementById('total')
  const status = document.getElementById('status')
  const pay = document.getElementById('pay')
  let choice = { credits: null, contribution: null }

  const element = new Canopy({ locale })
    .elements({ sessionId, clientSecret })
    .create('checkout', { contributionAmounts: contributions.split(' '), roundUp: { orderTotal } })
  element.on('change', (event) => {
    total.textContent = format.format((orderMinor + event.amountMinor) / 100)
    choice = {
      credits: event.credits && event.credits.selected ? event.credits.amount : null,
      contribution: event.contribution && event.contribution.selected ? event.contribution.amount : null,
    }
  })
  element.on('loaderror', () => {
    status.textContent = 'Climate options are not available right now; you can still pay for your order.'
  })
  element.mount('#impact')

  pay.addEventListener('click', async () => {
    pay.disabled = true
    status.textContent = 'Paying…'
    try {
      const response = await fetch(`/api/orders/${encodeURIComponent(orderId)}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(choice),
      })
      const body = await response.json()
      if (!response.ok) throw new Error(body.error)
      element.destroy()
      location.assign(body.redirect)
    } catch (error) {
      status.textContent = `The payment failed: ${error.message}`
      pay.disabled = false
    }
  })
})()
