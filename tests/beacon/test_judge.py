"""The judge: a fake server speaking the real chat-completions wire format, quotes checked verbatim, and the embedded judge."""

import json

import pytest

from beacon.judge import ChatJudge, EmbeddedJudge, default_judge, quote_found
from beacon.sample_site import LocalSite, Page
from core import safe_http
from tests.beacon.conftest import verdict
from tests.beacon.sites import good

pytestmark = pytest.mark.django_db

MATERIAL = ("Lumen Notes is an API that turns meeting recordings into notes. Get an API key with POST /api/v1/signup. "
            "Pro costs $19 per month.")


def completion(content: str, model: str = "judge-1") -> dict:
    """A chat.completion object as OpenAI-compatible servers return it."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1763770000, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


class FakeChat:
    """POST /v1/chat/completions: answers from `answers` (a function of the question), records each request."""

    def __init__(self, answer):
        self.requests = []

        def handle(handler):
            body = json.loads(handler.body)
            self.requests.append({"body": body, "auth": handler.headers.get("Authorization")})
            content = answer(body["messages"][-1]["content"])
            if isinstance(content, Page):
                return content
            return Page(json.dumps(completion(content)), content_type="application/json")

        self.site = LocalSite({"/v1/chat/completions": handle})
        self.url = f"http://judge.test:{self.site.port}/v1"

    def stop(self):
        self.site.stop()


@pytest.fixture
def chat(fake_dns):
    fake_dns({"judge.test": ["127.0.0.1"]})
    made = []

    def make(answer):
        server = FakeChat(answer)
        made.append(server)
        return server

    yield make
    for server in made:
        server.stop()


def _answer_for(question: str) -> dict:
    if "what the product is" in question:
        return {"verdict": "pass", "quote": "Lumen Notes is an API that turns meeting recordings into notes.", "reason": "Clear.", "suggestion": ""}
    if "first step" in question:
        return {"verdict": "pass", "quote": "Get an API key with POST /api/v1/signup.", "reason": "A signup API.", "suggestion": ""}
    return {"verdict": "partial", "quote": "Pro costs $19 per month.", "reason": "Only one plan.", "suggestion": "List every plan."}


def test_the_chat_judge_sends_the_wire_format_and_keeps_answers_that_quote_the_page(chat):
    server = chat(lambda q: json.dumps(_answer_for(q)))
    judge = ChatJudge(url=server.url, key="sk-test", model="judge-1")
    with safe_http.allow_loopback():
        answers = judge.judge(MATERIAL)
    assert {k: a.verdict for k, a in answers.items()} == {"says_what_it_does": "pass", "says_how_to_start": "pass", "states_price": "partial"}
    assert answers["states_price"].judge == "chat:judge-1"
    assert answers["states_price"].suggestion == "List every plan."
    sent = server.requests[0]
    assert sent["auth"] == "Bearer sk-test"
    assert sent["body"]["model"] == "judge-1" and sent["body"]["temperature"] == 0
    assert sent["body"]["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in sent["body"]["messages"]] == ["system", "user"]
    assert len(server.requests) == 3


def test_an_answer_whose_quote_is_not_in_the_page_does_not_count(chat):
    invented = {"verdict": "pass", "quote": "Lumen Notes is the best note taker on earth.", "reason": "r", "suggestion": ""}
    server = chat(lambda q: json.dumps(invented))
    with safe_http.allow_loopback():
        answers = ChatJudge(url=server.url, model="judge-1").judge("Welcome to our page. Hello.")
    assert all(a.judge == "embedded" for a in answers.values())
    assert all(a.verdict == "fail" for a in answers.values())
    assert "did not count" in answers["says_what_it_does"].reason


@pytest.mark.parametrize("reply", [
    "not json at all",
    json.dumps({"verdict": "excellent", "quote": ""}),
    Page("overloaded", status=503, content_type="text/plain"),
    Page(json.dumps({"choices": []}), content_type="application/json"),
], ids=["prose", "bad verdict", "503", "no choices"])
def test_a_broken_judge_falls_back_to_the_embedded_one(reply, chat):
    server = chat(lambda q: reply)
    with safe_http.allow_loopback():
        answers = ChatJudge(url=server.url, model="m").judge(MATERIAL)
    assert all(a.judge == "embedded" for a in answers.values())
    assert answers["says_how_to_start"].verdict == "pass"


def test_the_chat_judge_is_used_by_a_scan_when_configured(chat, site, scan, settings):
    server = chat(lambda q: json.dumps({"verdict": "fail", "quote": "", "reason": "Nothing.", "suggestion": "Say it."}))
    settings.BEACON_JUDGE_URL, settings.BEACON_JUDGE_MODEL = server.url, "judge-1"
    target, origin = site()
    target.routes.update(good(origin))
    report = scan(origin + "/")
    assert verdict(report, "says_what_it_does")["status"] == "fail"
    assert verdict(report, "says_what_it_does")["details"]["judge"] == "chat:judge-1"
    assert len(server.requests) == 3
    assert len(target.requests) == report["requests_made"]  # the judge's requests are not the site's


def test_the_judge_refuses_a_private_endpoint(settings):
    settings.BEACON_JUDGE_URL = "http://10.0.0.9/v1"
    answers = default_judge().judge(MATERIAL)
    assert all(a.judge == "embedded" and "not used" in a.reason for a in answers.values())


def test_the_embedded_judge_needs_no_network_and_quotes_the_page():
    answers = EmbeddedJudge().judge(MATERIAL, product="Lumen Notes")
    assert {k: a.verdict for k, a in answers.items()} == {"says_what_it_does": "pass", "says_how_to_start": "pass", "states_price": "pass"}
    assert all(quote_found(a.quote, MATERIAL) for a in answers.values())


def test_quotes_are_compared_verbatim_apart_from_whitespace():
    assert quote_found("turns   meeting\nrecordings", MATERIAL)
    assert not quote_found("Turns meeting recordings", MATERIAL)
    assert not quote_found("", MATERIAL)
