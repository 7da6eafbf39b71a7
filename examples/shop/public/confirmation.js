// The order confirmation: the embedded post-purchase widget. On Confirm, the shop's backend checks the choice,
// charges it (a fake payment) and allocates it with Canopy.
'use strict'
;(() => {
  const main = document.querySelector('main')
  const { orderId, sessionId, clientSecret, locale, contributions } = main.dataset
  const status = document.getElementById('status')

  const element = new Canopy({ locale })
    .elements({ sessionId, clientSecret })
    .create('embedded', { contributionAmounts: contributions.split(' ') })
  element.on('confirm', async (event) => {
    status.textContent = 'Adding your contribution…'
    const response = await fetch(`/api/orders/${encodeURIComponent(orderId)}/post-purchase`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        credits: event.credits && event.credits.selected ? event.credits.amount : null,
        contribution: event.contribution && event.contribution.selected ? event.contribution.amount : null,
      }),
    })
    const body = await response.json()
    status.textContent = response.ok ? `Thank you: allocated with Canopy (${body.fundsAllocationId}).` : `That failed: ${body.error}`
    if (response.ok) status.dataset.allocationId = body.fundsAllocationId
  })
  element.mount('#impact')
})()
