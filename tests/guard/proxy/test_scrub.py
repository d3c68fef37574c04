"""The secret scrubber on its own (guard/proxy/scrub.py): forms, streams of several choices,
the bound on held events, JSON kept valid. The same is run through a real proxy in
test_secrets.py."""

from __future__ import annotations

import base64
import json

import pytest

from guard.proxy.scrub import MAX_HELD_EVENTS, Secrets, SseScrubber

KEY = "sk-live-ABCD-1234-wxyz"


def event(text: str, index: int = 0) -> bytes:
    return ("data: " + json.dumps({"object": "chat.completion.chunk", "choices": [
        {"index": index, "delta": {"content": text}}]}) + "\n\n").encode()


def texts(raw: bytes) -> dict[int, str]:
    out: dict[int, str] = {}
    for part in raw.decode().split("\n\n"):
        if part.startswith("data: {"):
            for ch in json.loads(part[6:])["choices"]:
                out[ch["index"]] = out.get(ch["index"], "") + ch["delta"]["content"]
    return out


def stream(events: list[bytes], *, one_chunk: bool = False) -> bytes:
    scrubber = SseScrubber(Secrets([KEY]))
    if one_chunk:
        return scrubber.feed(b"".join(events), False)
    return b"".join(scrubber.feed(e, True) for e in events) + scrubber.feed(b"", False)


@pytest.mark.parametrize("text", [
    KEY, KEY.upper(), " ".join(KEY), KEY.replace("-", "\n"), KEY.replace("-", ". "),
    base64.b64encode(f"user:{KEY}".encode()).decode(),
    base64.urlsafe_b64encode(f"xy{KEY}".encode()).decode(),
])
def test_every_form_is_masked_and_the_json_stays_valid(text: str) -> None:
    body = json.dumps({"message": f"here: {text} (end)"}).encode()
    out = Secrets([KEY]).scrub(body)
    assert len(out) == len(body)
    masked = json.loads(out)["message"]
    assert masked.startswith("here: ") and masked.endswith(" (end)")
    assert "abcd" not in masked.lower() and "1234" not in masked


@pytest.mark.parametrize("one_chunk", [False, True], ids=["event-by-event", "one-chunk"])
def test_a_secret_interleaved_with_another_choice_is_masked(one_chunk: bool) -> None:
    events = [event("key ", 0), event("other ", 1), event(KEY[:6], 0), event("text", 1),
              event(KEY[6:15], 0), event(" more", 1), event(KEY[15:] + " done", 0)]
    got = texts(stream(events, one_chunk=one_chunk))
    assert got[1] == "other text more"
    assert got[0].startswith("key ") and got[0].endswith(" done")
    assert "ABCD" not in got[0] and "wxyz" not in got[0]


def test_a_stall_is_bounded_and_the_secret_still_masked_after_it() -> None:
    """An upstream that keeps a secret's beginning open with empty events: after
    MAX_HELD_EVENTS they are sent, and the rest of the secret is masked where it resumes."""
    events = [event("sk-li")] + [event("")] * (MAX_HELD_EVENTS + 5) + [event("ve-ABCD-1234-wxyz")]
    scrubber = SseScrubber(Secrets([KEY]))
    sent_before_end = b"".join(scrubber.feed(e, True) for e in events[:-1])
    assert sent_before_end  # released at the bound, not held forever
    rest = scrubber.feed(events[-1], True) + scrubber.feed(b"", False)
    assert "ABCD" not in texts(sent_before_end + rest)[0]


def test_ordinary_text_passes_unchanged() -> None:
    events = [event(w) for w in ["s", "k", "i", "p ", "live ", "sk", "ies"]]
    assert stream(events) == b"".join(events)


def test_short_secrets_are_matched_exactly_only() -> None:
    s = Secrets(["ab-12"])  # 4 letters and digits: a skeleton would match ordinary words
    assert s.scrub(b'"ab-12 and AB 12"') == b'"***** and AB 12"'
