"""A Stripe API on loopback for tests: the endpoints billing calls, answering in Stripe's wire format.

Requests arrive form-encoded the way the official SDK sends them (`a[b][0][c]=v`), are parsed back
into nested data, and are answered with objects shaped like Stripe's (`object`, `id` prefixes, `list`
envelopes, expandable fields) or with Stripe's error JSON (`{"error": {"type", "code", "message", ...}}`)
and status. Each change also produces the event Stripe would send (`events`), which tests deliver to
the webhook signed with the SDK's scheme.

Payment methods behave like Stripe's test cards (ids without underscores, as the spec's `pm_` + letters and digits):
    pm_1CardVisa                    the first payment succeeds: subscription active
    pm_1AuthenticationRequired  the first payment needs 3-D Secure: subscription incomplete,
                                    its invoice's PaymentIntent requires_action
    pm_1ChargeDeclined          card_declined (HTTP 402, type card_error)
"""

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import stripe

API_VERSION = stripe.api_version if hasattr(stripe, "api_version") else "2026-10-28.endive"


def _id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def parse_form(body: str) -> dict:
    """Stripe's form encoding back to nested data: a[b][0][c]=v -> {"a": {"b": [{"c": "v"}]}}."""
    root: dict = {}
    for key, value in parse_qsl(body, keep_blank_values=True):
        parts = key.replace("]", "").split("[")
        node = root
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return _lists(root)


def _lists(node):
    if isinstance(node, dict):
        node = {key: _lists(value) for key, value in node.items()}
        if node and all(key.isdigit() for key in node):
            return [node[key] for key in sorted(node, key=int)]
    return node


class StripeError(Exception):
    def __init__(self, status: int, **error):
        self.status = status
        self.error = error


class FakeStripe:
    def __init__(self, *, api_key: str = "sk_test_fake"):
        self.api_key = api_key
        self.customers: dict[str, dict] = {}
        self.subscriptions: dict[str, dict] = {}
        self.invoices: dict[str, dict] = {}
        self.sessions: dict[str, dict] = {}
        self.events: list[dict] = []
        self.requests: list[tuple[str, str, dict]] = []
        self.fail_cancel = False
        self.period = 30 * 24 * 3600
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, method):
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode() if length else ""
                params = parse_form(raw if method != "GET" else parts.query)
                owner.requests.append((method, parts.path, params))
                try:
                    if self.headers.get("Authorization") != f"Bearer {owner.api_key}":
                        raise StripeError(401, type="invalid_request_error", message="Invalid API Key provided.")
                    if not self.headers.get("Stripe-Version"):
                        raise StripeError(400, type="invalid_request_error", message="Stripe-Version is required.")
                    status, body = 200, owner.route(method, parts.path, params)
                except StripeError as exc:
                    status, body = exc.status, {"error": {**exc.error, "request_log_url": "https://dashboard.stripe.com/test/logs/req_x"}}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Request-Id", _id("req"))
                self.send_header("Stripe-Version", self.headers.get("Stripe-Version", API_VERSION))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._answer("GET")

            def do_POST(self):
                self._answer("POST")

            def do_DELETE(self):
                self._answer("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def start(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    # Events ---------------------------------------------------------------------------------------

    def emit(self, type: str, obj: dict, previous: dict | None = None, created: int | None = None) -> dict:
        event = {
            "id": _id("evt"), "object": "event", "api_version": API_VERSION, "created": created or int(time.time()),
            "data": {"object": json.loads(json.dumps(obj)), **({"previous_attributes": previous} if previous else {})},
            "livemode": False, "pending_webhooks": 1, "request": {"id": _id("req"), "idempotency_key": None}, "type": type,
        }
        self.events.append(event)
        return event

    def last_event(self, type: str) -> dict:
        return [event for event in self.events if event["type"] == type][-1]

    # Routes ---------------------------------------------------------------------------------------

    def route(self, method: str, path: str, params: dict) -> dict:
        segments = path.strip("/").split("/")
        if segments[0] != "v1":
            raise StripeError(404, type="invalid_request_error", message=f"Unrecognized request URL ({method}: {path}).")
        resource = segments[1:]
        if resource == ["customers"] and method == "POST":
            return self._customer_create(params)
        if len(resource) == 2 and resource[0] == "customers" and method == "POST":
            return self._customer_update(resource[1], params)
        if len(resource) == 3 and resource[0] == "payment_methods" and resource[2] == "attach":
            return self._pm_attach(resource[1], params)
        if resource == ["subscriptions"] and method == "POST":
            return self._subscription_create(params)
        if len(resource) == 2 and resource[0] == "subscriptions":
            sub = self._subscription(resource[1])
            if method == "GET":
                return sub
            if method == "POST":
                return self._subscription_update(sub, params)
            if method == "DELETE":
                return self._subscription_cancel(sub)
        if resource == ["invoice_payments"] and method == "GET":
            return self._invoice_payments(params)
        if resource == ["checkout", "sessions"] and method == "POST":
            return self._session_create(params)
        if resource == ["billing_portal", "sessions"] and method == "POST":
            return self._portal_create(params)
        raise StripeError(404, type="invalid_request_error", message=f"Unrecognized request URL ({method}: {path}).")

    def _customer_create(self, params):
        customer = {"id": _id("cus"), "object": "customer", "created": int(time.time()), "email": params.get("email"),
                    "name": params.get("name"), "metadata": params.get("metadata", {}), "livemode": False,
                    "invoice_settings": {"default_payment_method": None, "custom_fields": None, "footer": None}}
        self.customers[customer["id"]] = customer
        return customer

    def _customer_update(self, customer_id, params):
        customer = self.customers.get(customer_id)
        if customer is None:
            raise StripeError(404, type="invalid_request_error", code="resource_missing", param="id",
                              message=f"No such customer: '{customer_id}'")
        if "invoice_settings" in params:
            customer["invoice_settings"].update(params["invoice_settings"])
        return customer

    def _pm_attach(self, pm, params):
        if pm not in ("pm_1CardVisa", "pm_1AuthenticationRequired", "pm_1ChargeDeclined"):
            raise StripeError(400, type="invalid_request_error", code="resource_missing", param="payment_method",
                              message=f"No such PaymentMethod: '{pm}'")
        return {"id": pm, "object": "payment_method", "type": "card", "customer": params.get("customer"),
                "card": {"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2030}, "created": int(time.time())}

    def _subscription_object(self, customer, price, metadata, status):
        now = int(time.time())
        sub_id = _id("sub")
        return {
            "id": sub_id, "object": "subscription", "customer": customer, "status": status, "created": now,
            "cancel_at_period_end": False, "cancel_at": None, "canceled_at": None, "ended_at": None,
            "metadata": metadata or {}, "livemode": False, "collection_method": "charge_automatically",
            "items": {"object": "list", "has_more": False, "url": f"/v1/subscription_items?subscription={sub_id}", "data": [{
                "id": _id("si"), "object": "subscription_item", "quantity": 1, "subscription": sub_id,
                "current_period_start": now, "current_period_end": now + self.period,
                "price": {"id": price, "object": "price", "currency": "usd", "type": "recurring",
                          "recurring": {"interval": "month", "interval_count": 1}},
            }]},
            "latest_invoice": None,
        }

    def _invoice(self, sub, paid: bool, intent_status: str):
        invoice = {"id": _id("in"), "object": "invoice", "customer": sub["customer"], "status": "paid" if paid else "open",
                   "subscription": sub["id"], "amount_due": 2900, "currency": "usd",
                   "hosted_invoice_url": f"https://invoice.stripe.com/i/acct_test/test_{secrets.token_hex(8)}"}
        intent = {"id": _id("pi"), "object": "payment_intent", "status": intent_status, "amount": 2900, "currency": "usd",
                  "client_secret": f"pi_secret_{secrets.token_hex(8)}",
                  "next_action": {"type": "use_stripe_sdk", "use_stripe_sdk": {}} if intent_status == "requires_action" else None,
                  "last_payment_error": None}
        self.invoices[invoice["id"]] = {"invoice": invoice, "intent": intent}
        return invoice

    def _subscription_create(self, params):
        customer = params.get("customer")
        if customer not in self.customers:
            raise StripeError(400, type="invalid_request_error", code="resource_missing", param="customer",
                              message=f"No such customer: '{customer}'")
        pm = params.get("default_payment_method") or self.customers[customer]["invoice_settings"]["default_payment_method"]
        if pm == "pm_1ChargeDeclined":
            raise StripeError(402, type="card_error", code="card_declined", decline_code="generic_decline",
                              message="Your card was declined.", charge=_id("ch"), payment_method={"id": pm, "object": "payment_method"},
                              doc_url="https://stripe.com/docs/error-codes/card-declined")
        needs_action = pm == "pm_1AuthenticationRequired"
        sub = self._subscription_object(customer, params["items"][0]["price"], params.get("metadata"),
                                        "incomplete" if needs_action else "active")
        invoice = self._invoice(sub, paid=not needs_action, intent_status="requires_action" if needs_action else "succeeded")
        sub["latest_invoice"] = invoice["id"]
        self.subscriptions[sub["id"]] = sub
        self.emit("customer.subscription.created", sub)
        answer = json.loads(json.dumps(sub))
        if "latest_invoice" in (params.get("expand") or []):
            answer["latest_invoice"] = invoice
        return answer

    def _subscription(self, sub_id):
        sub = self.subscriptions.get(sub_id)
        if sub is None:
            raise StripeError(404, type="invalid_request_error", code="resource_missing", param="id",
                              message=f"No such subscription: '{sub_id}'")
        return sub

    def _subscription_update(self, sub, params):
        previous = {}
        if "items" in params:
            item = params["items"][0]
            current = sub["items"]["data"][0]
            if item.get("id") != current["id"]:
                raise StripeError(400, type="invalid_request_error", param="items[0][id]", message="No such subscription item.")
            previous["items"] = json.loads(json.dumps(sub["items"]))
            current["price"] = {**current["price"], "id": item["price"]}
            sub["proration_behavior_seen"] = params.get("proration_behavior")
        if "cancel_at_period_end" in params:
            previous["cancel_at_period_end"] = sub["cancel_at_period_end"]
            sub["cancel_at_period_end"] = params["cancel_at_period_end"] == "true"
            sub["cancel_at"] = sub["items"]["data"][0]["current_period_end"] if sub["cancel_at_period_end"] else None
        if "metadata" in params:
            sub["metadata"] = {**sub["metadata"], **params["metadata"]}
        self.emit("customer.subscription.updated", sub, previous)
        return sub

    def _subscription_cancel(self, sub):
        if self.fail_cancel:
            raise StripeError(500, type="api_error", message="An unknown error occurred.")
        sub["status"] = "canceled"
        sub["canceled_at"] = sub["ended_at"] = int(time.time())
        self.emit("customer.subscription.deleted", sub)
        return sub

    def _invoice_payments(self, params):
        found = self.invoices.get(params.get("invoice"))
        data = []
        if found:
            expand = "data.payment.payment_intent" in (params.get("expand") or [])
            intent = found["intent"] if expand else found["intent"]["id"]
            data.append({"id": _id("inpay"), "object": "invoice_payment", "invoice": found["invoice"]["id"],
                         "is_default": True, "status": "paid" if found["intent"]["status"] == "succeeded" else "open",
                         "amount_paid": None, "amount_requested": 2900, "currency": "usd",
                         "payment": {"type": "payment_intent", "payment_intent": intent}})
        return {"object": "list", "data": data, "has_more": False, "url": "/v1/invoice_payments"}

    def _session_create(self, params):
        now = int(time.time())
        session_id = f"cs_test_{secrets.token_hex(16)}"
        line = params["line_items"][0]
        amount = int(line["price_data"]["unit_amount"]) if "price_data" in line else None
        session = {
            "id": session_id, "object": "checkout.session", "mode": params["mode"], "status": "open", "payment_status": "unpaid",
            "url": f"https://checkout.stripe.com/c/pay/{session_id}", "created": now,
            "expires_at": int(params.get("expires_at") or now + 86400), "customer": params.get("customer"),
            "client_reference_id": params.get("client_reference_id"), "metadata": params.get("metadata", {}),
            "success_url": params.get("success_url"), "cancel_url": params.get("cancel_url"),
            "amount_total": amount, "currency": "usd", "payment_method_types": params.get("payment_method_types", ["card"]),
            "subscription": None, "payment_intent": None, "livemode": False,
            "_line": line, "_subscription_data": params.get("subscription_data", {}),
        }
        self.sessions[session_id] = session
        return {key: value for key, value in session.items() if not key.startswith("_")}

    def _portal_create(self, params):
        if params.get("customer") not in self.customers:
            raise StripeError(400, type="invalid_request_error", code="resource_missing", param="customer", message="No such customer.")
        return {"id": _id("bps"), "object": "billing_portal.session", "customer": params["customer"], "created": int(time.time()),
                "livemode": False, "return_url": params.get("return_url"),
                "url": f"https://billing.stripe.com/p/session/test_{secrets.token_hex(12)}"}

    # What the payer does on Stripe's pages ---------------------------------------------------------

    def checkout_complete(self, session_id: str, *, payment_status: str = "paid") -> list[dict]:
        """The payer finishes the Checkout page: the events Stripe sends, in order."""
        session = self.sessions[session_id]
        session["status"] = "complete"
        session["payment_status"] = payment_status
        events = []
        if session["mode"] == "subscription":
            sub = self._subscription_object(session["customer"], session["_line"]["price"],
                                            session["_subscription_data"].get("metadata"), "active")
            self.subscriptions[sub["id"]] = sub
            session["subscription"] = sub["id"]
            events.append(self.emit("customer.subscription.created", sub))
        else:
            session["payment_intent"] = _id("pi")
        public = {key: value for key, value in session.items() if not key.startswith("_")}
        events.append(self.emit("checkout.session.completed", public))
        if payment_status == "paid" and session["mode"] == "payment" and "crypto" in session["payment_method_types"]:
            pass
        return events

    def async_payment(self, session_id: str, *, succeeded: bool) -> dict:
        session = self.sessions[session_id]
        session["payment_status"] = "paid" if succeeded else "unpaid"
        public = {key: value for key, value in session.items() if not key.startswith("_")}
        return self.emit("checkout.session.async_payment_succeeded" if succeeded else "checkout.session.async_payment_failed", public)


def sign(payload: bytes, secret: str, timestamp: int | None = None) -> str:
    """A Stripe-Signature header made with the SDK's own scheme (t=<unix>,v1=<HMAC-SHA256>)."""
    timestamp = timestamp or int(time.time())
    signature = stripe.WebhookSignature._compute_signature(f"{timestamp}.{payload.decode()}", secret)
    return f"t={timestamp},{stripe.WebhookSignature.EXPECTED_SCHEME}={signature}"
