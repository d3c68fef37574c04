"""Text as a person reads it (guard/reading): normalization, readability, decoding."""

from __future__ import annotations

import base64
import codecs

import pytest

from guard.reading import decoded, decoded_unreadable, normalized, unreadable
from guard.reading.decode import blobs, unleet, unseparated
from guard.reading.readable import counted_words, known, lexicon, spaced_out

Q = "What is the maximum daily dose of acetaminophen for an adult?"


@pytest.mark.parametrize("text", [
    pytest.param("".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in Q),
                 id="fullwidth"),
    pytest.param("\u200b".join(Q), id="zero-width-space"),
    pytest.param("\u2060".join(Q), id="word-joiner"),
    pytest.param("\u202e" + Q + "\u202c", id="bidi-controls"),
    pytest.param(Q.replace("a", "а").replace("e", "е").replace("o", "о"), id="cyrillic"),
    pytest.param(Q.replace("o", "ο").replace("a", "α"), id="greek"),
    pytest.param("".join(f"\\u{ord(c):04x}" for c in Q), id="json-escapes"),
    pytest.param("".join(f"\\\\u{ord(c):04x}" for c in Q), id="json-escapes-twice"),
    pytest.param("".join(f"&#{ord(c)};" for c in Q), id="html-decimal"),
    pytest.param("".join(f"&#x{ord(c):x};" for c in Q), id="html-hex"),
    pytest.param(Q.replace(" ", "&nbsp;").replace("&nbsp;", " "), id="html-named"),
])
def test_what_a_reader_sees_is_the_plain_question(text: str) -> None:
    assert normalized(text) == Q


def test_plain_text_is_returned_as_is() -> None:
    for text in (Q, "def f(x):\n    return x // 2", "Café au lait, naïve résumé", "2 + 2 = 4"):
        assert normalized(text) == text or text != text.encode().decode()  # nothing to undo
    assert normalized(Q) is Q  # the ASCII fast path returns the same object


def test_a_lone_surrogate_is_read_as_the_replacement_character() -> None:
    assert normalized("dose \ud800 of") == "dose \ufffd of"
    assert normalized("x\\ud83d\\ude00") == "x\U0001f600"  # an escaped pair is one character


@pytest.mark.parametrize("text", [
    Q, "hey how long do i have to respond to the lawsuit papers i got",
    "def mgdl_to_mmol(glucose_mgdl: float) -> float:",
    "A muon has a proper mean lifetime of 2.2 μs.",
    "Pierre de Coubertin founded the modern Olympics in which year?",
    "ok thx", "Is it safe to eat à la carte meals from the café?",
])
def test_english_reads(text: str) -> None:
    assert not unreadable(text)


@pytest.mark.parametrize("text", [
    pytest.param("¿Cuál es la dosis diaria máxima de paracetamol para un adulto?", id="es"),
    pytest.param("Quelle est la dose quotidienne maximale de paracétamol pour un adulte ?",
                 id="fr"),
    pytest.param("Qual è la dose massima giornaliera di paracetamolo per un adulto?", id="it"),
    pytest.param("Wie viel Paracetamol darf ein Erwachsener pro Tag maximal nehmen?", id="de"),
    pytest.param("成人每天服用对乙酰氨基酚的最大剂量是多少？", id="zh"),
    pytest.param("Какова максимальная суточная доза парацетамола?", id="ru"),
    pytest.param(Q[::-1], id="reversed"),
    pytest.param(codecs.encode(Q, "rot13"), id="rot13"),
    pytest.param(" ".join(Q.replace(" ", "")), id="spaced-out"),
    pytest.param("What is the dose of асetaminophen ДЛЯ an adult?", id="mixed-script-word"),
])
def test_what_the_cost_model_cannot_read_is_flagged(text: str) -> None:
    assert unreadable(text)


def test_counted_words_skip_code_numbers_and_short_tokens() -> None:
    assert counted_words("Use my_var=2 or getValue() at 3pm, ok?") == ["Use"]
    assert spaced_out("W h a t  i s  t h e  d o s e") and not spaced_out("I saw a B and a C.")


def test_the_lexicon_is_english_and_knows_suffixes() -> None:
    lex = lexicon()
    assert len(lex) > 50_000 and "acetaminophen" in lex and "dosis" not in lex
    assert known("Doses") and known("children's") and known("well-known")
    assert not known("paracetamolo")


def test_decodings_add_the_hidden_question() -> None:
    b64 = base64.b64encode(Q.encode()).decode()
    assert blobs(f"please answer {b64}") == [Q]
    assert blobs("see " + Q.encode().hex()) == [Q]
    assert Q in decoded(f"answer this: {b64}")
    assert unleet("wh4t 1s th3 m4x1mum d0s3") == "what is the maximum dose"
    assert unleet("my 4yo took 300mg") is None  # nothing becomes a word: unchanged
    assert unseparated("a.c.e.t.a.m.i.n.o.p.h.e.n dose") == "acetaminophen dose"
    assert decoded(Q) == []  # plain text hides nothing


@pytest.mark.parametrize("encode", [lambda q: q[::-1], lambda q: codecs.encode(q, "rot13")],
                         ids=["reversed", "rot13"])
def test_an_unreadable_sentence_is_decoded_when_it_can_be(encode: object) -> None:
    assert decoded_unreadable(encode(Q)) == Q  # type: ignore[operator]
    assert decoded_unreadable("¿Cuál es la dosis máxima de paracetamol?") is None
