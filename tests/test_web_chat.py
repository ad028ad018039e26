"""The web chat in a real browser: Playwright drives Debian's chromium (installed by `make setup`) against
`augmenter serve` with the fake LLM on the demo knowledge base. It sees the draft stream in marked "checking…",
the checked answer that replaces it with its sources, the trace, the history kept per browser session, and markup
in a question or a model reply shown as text. A screenshot goes to $AUGMENTER_SCREENSHOT when set (the README's
docs/img/web_chat.png is made with AUGMENTER_SCREENSHOT=docs/img/web_chat.png)."""

import os
import shutil
from pathlib import Path

import pytest

from augmenter.config import compose
from augmenter.serve import Background, ServeSettings, create_app, pool_from_config, warm_up

playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (augmenter[dev])")
CHROMIUM = os.environ.get("AUGMENTER_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(not CHROMIUM, reason="no chromium: `make setup` installs it with apt-get")

REPLY = "Yes, there is an indoor heated pool open from 7 am to 10 pm."
QUESTION = "Does the Grand Meridian Hotel have a pool?"
PROBE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> xss-probe: any pool?'
MODEL_MARKUP = "<img src=x onerror=window.__pwned=3> <b>bold</b>"
SCREEN = {"width": 1100, "height": 1000}


@pytest.fixture(scope="module")
def url():
    cfg = compose(
        "serve",
        [
            "llm=fake",
            f"llm.default='{REPLY}'",
            "consolidator.opinions=false",  # a draft streams
            "llm.stream_delay=0.12",
            f"+llm.rules={{xss-probe: '{MODEL_MARKUP}'}}",
        ],
    )
    warm_up(cfg)
    with Background(create_app(pool_from_config(cfg, workers=2).build())) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        # a test browser on 127.0.0.1: no sandbox (root and containers lack it), /tmp instead of a small /dev/shm
        chromium = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"], headless=True
        )
        yield chromium
        chromium.close()


def open_page(browser, url):
    # without the page's CSP: the escaping alone must keep markup inert (and Playwright's probes need eval)
    context = browser.new_context(viewport=SCREEN, bypass_csp=True)
    page = context.new_page()
    page.goto(url)
    page.wait_for_function("document.getElementById('status').textContent.includes('ready')")
    return context, page


def send(page, text):
    page.fill("#question", text)
    page.press("#question", "Enter")


def test_the_draft_streams_in_then_the_checked_answer_with_sources_and_trace(browser, url, tmp_path):
    context, page = open_page(browser, url)
    send(page, QUESTION)
    assert page.locator(".msg.user").last.text_content() == QUESTION
    # the draft, marked as being checked, grows word by word
    page.wait_for_function(
        "(document.querySelector('.msg.assistant.draft .text') || {}).textContent?.split(' ').length >= 3"
    )
    draft = page.locator(".msg.assistant.draft")
    assert "checking…" in draft.locator(".badge").text_content()
    partial = draft.locator(".text").text_content()
    assert REPLY.startswith(partial) and partial != REPLY
    # then the checked answer replaces it, with its sources
    final = page.locator(".msg.assistant.final")
    final.wait_for(timeout=30_000)
    assert page.locator(".msg.assistant.draft").count() == 0
    assert final.locator(".text").text_content() == REPLY
    sources = final.locator(".sources").first.text_content()
    assert "[1] hotel:1:faq:0" in sources and "indoor heated pool" in sources
    assert f"[1] {REPLY}" in final.locator(".cites").all_text_contents()
    # the collapsible trace: actions, evidence, candidates with scores
    trace = final.locator("details.trace")
    assert not trace.evaluate("d => d.open")
    trace.locator("summary").click()
    rows = trace.locator("table tr").all_text_contents()
    assert [r for r in rows if "consolidate_knowledge" in r] and [r for r in rows if "verify_utility" in r]
    assert "score" in trace.locator(".cand").first.text_content() and "supported" in trace.text_content()
    shot = Path(os.environ.get("AUGMENTER_SCREENSHOT") or tmp_path / "web_chat.png")
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    context.close()


def test_markup_in_a_question_or_a_model_reply_is_shown_as_text(browser, url):
    context, page = open_page(browser, url)
    send(page, PROBE)
    page.locator(".msg.assistant.final").wait_for(timeout=30_000)
    assert page.locator(".msg.user").last.text_content() == PROBE  # the literal text, tags and all
    page.locator("details.trace summary").click()
    candidates = page.locator("details.trace .cand").all_text_contents()
    assert any(MODEL_MARKUP in c for c in candidates)  # the model's markup, as text
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#log script, #log img, #log b").count() == 0
    context.close()


def test_each_browser_session_keeps_its_own_history(browser, url):
    context, page = open_page(browser, url)
    send(page, QUESTION)
    page.locator(".msg.assistant.final").wait_for(timeout=30_000)
    send(page, "Is there free parking there?")  # "there": the hotel comes from the history the page sends
    page.locator(".msg.assistant.final").nth(1).wait_for(timeout=30_000)
    page.locator("details.trace summary").nth(1).click()
    assert "entities: Grand Meridian Hotel" in page.locator("details.trace").nth(1).text_content()
    page.reload()  # the conversation survives a reload of the same session
    page.wait_for_function("document.querySelectorAll('.msg.assistant.final').length === 2")
    other_context, other = open_page(browser, url)  # another browser session starts empty
    assert other.locator(".turn").count() == 0
    send(other, "Is there free parking there?")
    other.locator(".msg.assistant.final").wait_for(timeout=30_000)
    other.locator("details.trace summary").click()
    assert "entities:" not in other.locator("details.trace").text_content()
    page.click("#reset")
    assert page.locator(".turn").count() == 0
    other_context.close()
    context.close()


def test_with_auth_the_page_asks_for_the_key_and_sends_it(browser, monkeypatch):
    monkeypatch.setenv("AUGMENTER_TEST_WEB_KEY", "web-chat-token-0042")
    cfg = compose("serve", ["llm=fake", f"llm.default='{REPLY}'", "consolidator.opinions=false"])
    settings = ServeSettings.from_config({"api_key_env": "AUGMENTER_TEST_WEB_KEY"})
    app = create_app(pool_from_config(cfg).build(), settings)
    with Background(app) as base:
        context, page = open_page(browser, base)
        assert page.locator("#key").is_visible()
        send(page, QUESTION)  # no key yet: refused, and said so
        page.locator(".msg.assistant.failed").wait_for(timeout=30_000)
        assert "Authorization: Bearer" in page.locator(".msg.assistant.failed").text_content()
        page.fill("#key", "web-chat-token-0042")
        send(page, QUESTION)
        page.locator(".msg.assistant.final").wait_for(timeout=30_000)
        assert page.locator(".msg.assistant.final .text").text_content() == REPLY
        context.close()
