"""Signals billing sends, so products react to payments without billing importing them.

`payment_succeeded` is sent once per paid one-time checkout that is not a credit pack (Beacon's $5
card check), after the Stripe event is verified and stored, inside its transaction:

    @receiver(payment_succeeded)
    def _paid(sender, *, kind, reference, org, amount_total, currency, session_id, **kwargs):
        if kind == "beacon":
            ...  # `reference` is what the product passed to payment_checkout_create

`payment_failed` carries the same arguments when an asynchronous payment (stablecoin) failed.
"""

from django.dispatch import Signal

payment_succeeded = Signal()
payment_failed = Signal()
