"""Identification on real data: the shared crawler list's instances, and thousands of ordinary browser strings."""

import json
import re
from pathlib import Path

import pytest

from atlas.matcher import AGENT, CONTROL, GENERIC, Matcher
from atlas.seed import SOURCES_DIR, _token_of, seed_build

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def matcher():
    entries, generic, _lists = seed_build()
    tokens = []
    for entry in entries:
        if entry["kind"] == "control_token":
            tokens.append((entry["robots_txt_token"], CONTROL, entry["slug"]))
        else:
            tokens += [(token, AGENT, entry["slug"]) for token in entry["user_agent_tokens"]]
    tokens += [(client["token"], GENERIC, client["token"].lower()) for client in generic]
    return Matcher(tokens), {e["slug"]: e for e in entries}


def _whole(token: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


def test_every_instance_the_crawler_list_attributes_to_a_registry_agent_is_identified_as_that_agent(matcher):
    match, entries = matcher
    slug_of = {token.lower(): e["slug"] for e in entries.values() if e["kind"] != "control_token" for token in e["user_agent_tokens"]}
    checked, substring_artifacts, wrong = 0, [], []
    for item in json.loads((SOURCES_DIR / "crawler-user-agents.json").read_text()):
        token = _token_of(item["pattern"], item.get("instances", []))
        if token is None or token.lower() not in slug_of:
            continue
        for instance in item.get("instances", []):
            slug = slug_of[token.lower()]
            if not _whole(token, instance):
                # The pattern may be an alternation (AhrefsBot|AhrefsSiteAudit): the instance names what it matched.
                found_text = re.search(item["pattern"], instance)
                alternative = found_text.group(0).rstrip("/") if found_text else ""
                if alternative.lower() not in slug_of or not _whole(alternative, instance):
                    substring_artifacts.append(instance)  # the list's `exabot` pattern inside "Alexabot"
                    continue
                slug = slug_of[alternative.lower()]
            checked += 1
            found = match.best(instance).get(AGENT)
            # The agent itself, or a more specific entry of ours whose token contains it (AhrefsSiteAudit for AhrefsBot).
            ok = found is not None and (found.key == slug or token.lower() in found.token.lower() or
                                        entries[found.key]["operator"] == entries[slug]["operator"] != "")
            if not ok:
                wrong.append((slug, found and found.key, instance))
    assert checked > 250
    assert not wrong, wrong[:10]
    assert len(substring_artifacts) <= 1, substring_artifacts


@pytest.mark.parametrize("corpus", ["browsers.txt", "devices-crawlerdetect.txt"])
def test_ordinary_browser_strings_claim_no_agent_false_positive_rate_under_a_tenth_of_a_percent(matcher, corpus):
    match, _entries = matcher
    strings = [line.strip() for line in (DATA / corpus).read_text().splitlines() if line.strip()]
    claimed = [ua for ua in strings if AGENT in match.best(ua)]
    assert len(strings) > 800
    assert len(claimed) / len(strings) < 0.001, claimed[:10]


def test_tokens_match_whole_never_inside_another_word():
    match = Matcher([("LCC", AGENT, "lcc"), ("Spider", AGENT, "spider"), ("Googlebot", AGENT, "googlebot"),
                     ("Googlebot-Image", AGENT, "googlebot-image")])
    ie = "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727)"
    assert match.best(ie) == {}
    assert match.best("Mozilla/5.0 (compatible; Baiduspider/2.0)") == {}
    assert match.best("Googlebot-Image/1.0")[AGENT].key == "googlebot-image"
    assert match.best("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")[AGENT].key == "googlebot"
    assert match.best("googlebot-video/1.0")[AGENT].key == "googlebot"  # case-insensitive, hyphen is a boundary


def test_a_robots_control_token_is_not_a_crawler(matcher):
    match, entries = matcher
    assert entries["google-extended"]["kind"] == "control_token"
    found = match.best("Google-Extended/1.0")
    assert AGENT not in found and found[CONTROL].key == "google-extended"


@pytest.mark.parametrize("user_agent,client", [
    ("curl/8.5.0", "curl"), ("python-requests/2.32.3", "python-requests"), ("Go-http-client/2.0", "Go-http-client"),
    ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36",
     "HeadlessChrome"),
])
def test_generic_clients_are_recognised_and_claim_no_operator(matcher, user_agent, client):
    match, _entries = matcher
    found = match.best(user_agent)
    assert AGENT not in found and found[GENERIC].token == client
