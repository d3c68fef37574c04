"""Refusal detection on real SmolLM2-135M replies and on the usual phrasings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard import DEFAULT_REFUSAL_TEXT, REFUSAL_HINT, is_refusal

DATA = json.loads((Path(__file__).parent / "data" / "smollm2_replies.json").read_text())
REPLIES: list[dict[str, Any]] = DATA["replies"]


def test_fixture_holds_real_answers_and_refusals() -> None:
    labels = [r["label"] for r in REPLIES]
    assert len(REPLIES) >= 20
    assert labels.count("refusal") >= 6 and labels.count("answer") >= 20
    assert {r["source"] for r in REPLIES} == set(DATA["sources"])


@pytest.mark.parametrize("reply", [pytest.param(r, id=r["id"]) for r in REPLIES])
def test_real_smollm2_replies(reply: dict[str, Any]) -> None:
    assert is_refusal(reply["response"]) is (reply["label"] == "refusal")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(DEFAULT_REFUSAL_TEXT, id="paper"),
        pytest.param("I cannot answer", id="paper-no-period"),
        pytest.param("**I cannot answer.**", id="bold"),
        pytest.param("I'm sorry, but I can't help with that.", id="cant-help"),
        pytest.param("I’m sorry, but I can’t provide medical advice.", id="curly-apostrophes"),
        pytest.param("I don't know.", id="dont-know"),
        pytest.param("As an AI language model, I cannot predict stock prices.", id="as-an-ai"),
        pytest.param("I do not have access to real-time data.", id="no-access"),
        pytest.param("There is not enough information to answer this question.", id="not-enough"),
        pytest.param("Unfortunately, I am unable to determine that.", id="unable"),
        pytest.param("It's impossible to predict the lottery numbers.", id="impossible"),
        pytest.param("Sorry. I cannot be certain about that.", id="filler-then-refusal"),
        pytest.param("There is no way to know what you ate this morning.", id="no-way-to-know"),
        pytest.param("Could you please provide more details about your setup?", id="clarify"),
        pytest.param("I would need more information about the patient.", id="need-more"),
        pytest.param("", id="empty"),
        pytest.param("   \n", id="blank"),
    ],
)
def test_usual_refusal_phrasings(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The capital of France is Paris.", id="fact"),
        pytest.param("No.", id="bare-no"),
        pytest.param("No, you cannot safely concatenate user input into SQL.", id="no-you-cannot"),
        pytest.param("Paris. I don't know much else about it, though.", id="late-dont-know"),
        pytest.param("B) Ammonia", id="choice"),
        pytest.param("I'm sorry for the confusion, but the answer is 42.",
                     id="apology-then-answer"),
        pytest.param("Python is widely used as a language for AI research.", id="mentions-ai"),
        pytest.param("The maximum is 4 g per day; I cannot stress enough not to exceed it.",
                     id="cannot-stress"),
    ],
)
def test_answers_are_not_refusals(text: str) -> None:
    assert not is_refusal(text)


def test_refusal_hint_asks_for_the_default_refusal_text() -> None:
    assert REFUSAL_HINT.endswith(DEFAULT_REFUSAL_TEXT)


# replies written for these tests, in the shapes the second gold sample found (issue 22)
@pytest.mark.parametrize("reply", [
    "Hi Sam,\n\nI'm sorry for any confusion. I can't answer that directly because I don't "
    "have your account data.",
    "Dear Ms. Lee,\n\nWhat is the dose for my son?\nI cannot provide a dose without his weight.",
    "The lease does not specify when the deposit must be returned.",
    "The meeting time is not specified.",
    "Hello, sorry to hear that, but I don't have the password for your router.",
    "I'm happy to help. However, I'll need some more information about the loan first.",
    "Thanks for writing. If you have more details about the contract, let me know and we "
    "can go on.",
    "Sure thing! Please provide the dimensions of the room.",
    "I'd be glad to help with that. What kind of garden are you planning for?",
])
def test_declines_the_opening_rules_used_to_miss(reply: str) -> None:
    assert is_refusal(reply)


@pytest.mark.parametrize("reply", [
    "The boiling point of this alloy is not known yet. However, it melts at 420 degrees.",
    "I'm not sure. Nitrile is the better glove material for that solvent.",
    "The exact figure is unknown. Estimates put it at about 20,000 workers.",
    "Hi Jo,\n\nThe fee is $12.50 per month.",
    "What kind of partner do you want? Think about it. Staying may be right for you.",
])
def test_an_answer_after_a_hedge_or_a_salutation_is_an_answer(reply: str) -> None:
    assert not is_refusal(reply)


def test_a_hedge_that_defers_stays_a_refusal() -> None:
    assert is_refusal("I'm not sure. You should check with your pharmacist.")
    assert is_refusal("The answer is currently unknown. I would ask a lawyer about it.")


# replies written for these tests, in the shapes the first two gold samples (all tuning data
# since the third, fresh sample) found the rules missing or over-reading (issue 22)
@pytest.mark.parametrize("reply", [
    pytest.param("I'm ready to help. What's your question?", id="offer-then-ask"),
    pytest.param("I am here to assist you with your shopping. If you have any specific "
                 "questions, please don't hesitate to ask.", id="offers-only"),
    pytest.param("I'm not a stock-trading bot. I can only give general information about "
                 "markets.", id="role-denial-then-limit"),
    pytest.param("I am not a booking agent. I'm an AI model built to chat.",
                 id="role-denial-then-self-description"),
    pytest.param("i cant answer that", id="no-apostrophe"),
    pytest.param("im not sure.", id="no-apostrophe-im"),
    pytest.param("I'm sorry for the trouble, but as a cooking assistant, I focus on "
                 "recipes. However, I don't have access to your oven's settings.",
                 id="apology-role-then-decline"),
    pytest.param("I'm not equipped to look up parcel deliveries.", id="not-equipped"),
    pytest.param("Sorry, I cannot return the exact balance of your account.",
                 id="agent-verb"),
    pytest.param("The most beautiful beach in Spain is not a specific place, but rather a "
                 "matter of what you enjoy.", id="taste-not-specific"),
    pytest.param("The nicest font is a topic of ongoing debate among designers. Some people "
                 "prefer serif faces, others sans.", id="debate-then-views"),
    pytest.param("Quarterly report\n\nHi Dana,\n\nI'm not sure whether the audit has "
                 "finished. I would suggest asking the finance team.",
                 id="subject-line-salutation-hedge-defer"),
    pytest.param("Thanks for asking. The memo is clear on the fee. The memo does not state "
                 "the date of the hearing.", id="lacks-in-second-sentence"),
    pytest.param("I'm sorry for the mix-up. I'd be happy to help with that. However, as a "
                 "travel assistant, I can plan trips, but I do not have knowledge about "
                 "this hotel's prices.", id="courtesy-then-role-then-decline"),
])
def test_declines_the_fresh_tuning_found(reply: str) -> None:
    assert is_refusal(reply)


@pytest.mark.parametrize("reply", [
    pytest.param("I'm sorry for any confusion, but as a fitness coach, my main role is to "
                 "build training plans. I can help with your schedule.",
                 id="apology-role-deflects"),
    pytest.param("I'm not a doctor, but a sprain usually heals in two to six weeks.",
                 id="not-a-doctor-but"),
    pytest.param("I'm not a mechanic. The noise is most likely a worn brake pad.",
                 id="role-denial-overridden"),
    pytest.param("The best pizza style is often debated, but most people would pick a "
                 "Neapolitan margherita.", id="debated-but-chooses"),
    pytest.param("The best novel is often debated among critics. However, if I had to "
                 "choose, it would be Middlemarch.", id="debated-then-chooses"),
    pytest.param("I'm not sure what you mean, but the answer is 12.", id="unsure-but-answers"),
    pytest.param("The richest city in Europe is not a specific place, but rather London.",
                 id="not-specific-without-taste"),
    pytest.param("The hash function is not designed to be reversed; use bcrypt.",
                 id="not-designed-describes"),
    pytest.param("Thanksgiving Day.", id="thanks-prefix-word"),
    pytest.param("I'm here to help. The train leaves at 9:40 from platform 2.",
                 id="offer-then-answer"),
])
def test_answers_the_fresh_tuning_found(reply: str) -> None:
    assert not is_refusal(reply)


# replies written for these tests, in the shapes the three seen gold samples found the rules
# missing (issue 22, fourth round): each names the linguistic class it stands for
@pytest.mark.parametrize("reply", [
    pytest.param("I'm sorry, but as a booking assistant I can only help with bookings and not "
                 "with questions about the weather.", id="scope-and-not"),
    pytest.param("Hi Ana,\n\nI'm sorry for any confusion. I can only answer this if you "
                 "send me the invoice.", id="scope-if"),
    pytest.param("No, I'm afraid of not providing an answer here.", id="not-providing"),
    pytest.param("Hello,\n\nI'm planning a trip in May.\n\nThe answer is not possible.",
                 id="conclusion-answer-not-possible"),
    pytest.param("Thanks for asking. Here is how I usually think about leases. I can only go "
                 "so far with that. Otherwise: I cannot answer.", id="ends-with-refusal-text"),
    pytest.param("To work out your dose, you should consult your pharmacist.",
                 id="opening-defers-to-professional"),
    pytest.param("To say how long the repair takes, I need to know which model you have. "
                 "Older ones take longer.", id="needs-to-know"),
    pytest.param("Happy to help with the booking. If any details are missing, let me know.",
                 id="details-missing"),
    pytest.param("Good morning. I'm glad to help. Please send me the details of the order and "
                 "I'll look into it.", id="send-me-details"),
    pytest.param("Some dates matter here. Then again, others do not. Overall there is no "
                 "further information provided that would settle it.",
                 id="conclusion-no-information"),
    pytest.param('"I\'m not sure what the fee is."', id="wrapped-in-quotes"),
    pytest.param("Unfortunately, I have no way of checking your parcel.", id="no-way-of"),
    pytest.param("I don't have that information.", id="dont-have-that-information"),
    pytest.param("I have no details about this particular flight.", id="have-no-details"),
    pytest.param("That is not something I can know from here.", id="not-something-i-can"),
    pytest.param("You haven't told me the width of the room, so the area is open.",
                 id="user-left-it-out"),
    pytest.param("The information you provided does not include the tank's volume.",
                 id="given-information-lacks"),
    pytest.param("Nothing in the article says when the shop opens.", id="nothing-in-the-doc"),
    pytest.param("The warranty card is silent on water damage.", id="document-silent"),
    pytest.param("The excerpt does not tell us who signed it.", id="document-does-not-tell"),
    pytest.param("Could you tell me which version you are running?", id="could-you-tell-me"),
    pytest.param("I'm not able to look that up for you.", id="not-able-to-look-up"),
])
def test_declines_the_seen_gold_classes(reply: str) -> None:
    assert is_refusal(reply)


@pytest.mark.parametrize("reply", [
    pytest.param("I'm not able to give an exact figure. I can only give the best answer I "
                 "have, which is that the tank holds 40 litres.", id="decline-then-which-is"),
    pytest.param("As a budgeting helper I don't have the ability to forecast. However, you "
                 "can add it up: So, 12 x 50 = 600 dollars.", id="decline-then-equation"),
    pytest.param("I can't be certain, but the answer is 9.", id="same-sentence-answer"),
    pytest.param("I cannot verify this. The short answer is: 3 days.", id="answer-is-colon"),
    pytest.param("You should consult a doctor if the fever lasts; for now, rest and drink "
                 "water.", id="consult-with-advice"),
    pytest.param("If you tell me the details I can check, but the usual fee is $25.",
                 id="offer-then-answer"),
    pytest.param("Nothing in the passage suggests otherwise: the author is John.",
                 id="nothing-suggests-otherwise"),
    pytest.param("My answer is based on the 2020 census: 8.3 million people.",
                 id="my-answer-is-based"),
    pytest.param("The label does not include nuts, so it is safe for your son.",
                 id="does-not-include-answers"),
    pytest.param('"Paris."', id="quoted-answer"),
])
def test_answers_the_seen_gold_classes(reply: str) -> None:
    assert not is_refusal(reply)


def test_a_decline_that_is_answered_is_still_a_decline_when_the_answer_is_a_refusal() -> None:
    assert is_refusal("I can't help with that. The answer is: I cannot answer.")


# a chat assistant's ways of declining and of answering after a caveat (issue 35); replies
# written for these tests, each naming its class
@pytest.mark.parametrize("reply", [
    pytest.param("Nobody knows. No record of it survives.", id="nobody-knows"),
    pytest.param("No one can reliably predict next month's rate.", id="no-one-can-predict"),
    pytest.param("Nobody outside the company knows the exact figure.", id="nobody-outside-knows"),
    pytest.param("That's unknowable: the ship's log was lost.", id="unknowable"),
    pytest.param("Unknown. The first owner was never identified.", id="unknown-alone"),
    pytest.param("That isn't known. No reliable record of his breakfast survives.",
                 id="not-known-and-why"),
    pytest.param("There's no single best editor. It depends on what you write.",
                 id="no-single-best"),
    pytest.param("There isn't one diet that suits everyone.", id="there-is-not-one"),
    pytest.param("Neither is objectively better; it comes down to taste.",
                 id="neither-is-better"),
    pytest.param("Neither is morally worse in itself.", id="neither-adverb-comparative"),
    pytest.param("It depends on where you live:\n- In the US: yes\n- In the UK: no",
                 id="it-depends-on"),
    pytest.param("Depends.", id="depends-alone"),
    pytest.param("It depends mainly on the size of the pipe.", id="depends-mainly"),
    pytest.param("The right dose depends on her weight, so ask the pharmacist.",
                 id="the-dose-depends"),
    pytest.param("I'd need the length of the wall to work that out.", id="i-would-need"),
    pytest.param("I can't work that out without the tank's volume.", id="cannot-work-out"),
    pytest.param("I can't safely tell you a dose for that.", id="cannot-safely-tell"),
    pytest.param("That can't be worked out from the figures given.", id="cannot-be-worked-out"),
    pytest.param("The perimeter alone isn't enough to find the area.", id="not-enough-to-find"),
    pytest.param("The label doesn't give enough information to say.", id="not-enough-information"),
    pytest.param("I can work this out once I know your start date.", id="once-i-know"),
    pytest.param("I can't tell from this. For example, at 5% it would be $40.",
                 id="an-example-is-no-answer"),
    pytest.param("I need the hourly rate. Total = 744 × the hourly rate.",
                 id="a-formula-is-no-answer"),
    pytest.param("Nobody can know that exactly. The most common estimate is about 40 million.",
                 id="an-estimate-as-context"),
    pytest.param("1. I cannot answer that question.\n2. I am not able to work it out.",
                 id="a-list-number-before-the-refusal-text"),
    pytest.param("A) I cannot answer.", id="an-option-label-before-the-refusal-text"),
    pytest.param("The exact weight of the first loaf ever baked is not available.",
                 id="is-not-available"),
    pytest.param("Its beauty can be subjective and depends on taste.", id="can-be-subjective"),
    pytest.param("The answer to this question depends on the model of your car.",
                 id="the-answer-depends"),
])
def test_a_chat_assistants_declines(reply: str) -> None:
    assert is_refusal(reply)


@pytest.mark.parametrize("reply", [
    pytest.param("I can't check live prices. As of my latest information, a ticket is **$12**.",
                 id="as-of-my-latest-information"),
    pytest.param("I can't see live figures. The city has about 2 million people.",
                 id="a-figure-after-the-caveat"),
    pytest.param("This is a matter of taste, but the most common pick is **Rome**.",
                 id="the-most-common-pick"),
    pytest.param("There isn't one best bank. If you want a default, I'd suggest a credit union.",
                 id="i-would-suggest-a"),
    pytest.param("There's no objective answer. If I had to pick: **the bicycle**.",
                 id="if-i-had-to-pick"),
    pytest.param("It depends on the person.\n\nbest_option: tea", id="a-field-filled-in"),
    pytest.param("I can't be sure. So, 40 - 15 = 25 days.", id="a-result-concluded"),
])
def test_a_chat_assistants_answers_after_a_caveat(reply: str) -> None:
    assert not is_refusal(reply)


# declines found after issue 35's fifth sample (replies written for the test): a decline or a
# request for what is missing after a courtesy, a caution or a referral; what the answer
# depends on; working given before a formula in what is missing; a unit conversion as context;
# a long "... is not specified."; "I'm not sure what to say." ending the opening sentence
@pytest.mark.parametrize("reply", [
    pytest.param("Glad to help. I need your flight number first, because the gate depends on it.",
                 id="a-request-after-a-courtesy"),
    pytest.param("Please don't stop the tablets on your own. The right change depends on your "
                 "blood pressure readings.", id="a-decline-after-a-caution"),
    pytest.param("He should ring the vet straight away. Whether it is harmful depends on the "
                 "brand of chocolate and the dog's weight.", id="whether-it-depends"),
    pytest.param("I'd need the price per tile, since you didn't give it. Here is the working:\n"
                 "The floor is 4 m × 5 m = 20 m², so 20 m² × 9 tiles = 180 tiles.\n"
                 "Cost = 180 × the price per tile.", id="working-before-a-formula-in-the-gap"),
    pytest.param("That depends on the cup you use. Two tablespoons are about 30 mL, since "
                 "1 tbsp = 15 mL.", id="a-conversion-as-context"),
    pytest.param("The precise day on which the next volcanic eruption of the island will begin "
                 "is not specified. If you share a forecast, I can explain it.",
                 id="a-long-subject-not-specified"),
    pytest.param("Your friend has had a hard month, and I'm not sure what to say. Still, here "
                 "are a few ideas.", id="not-sure-what-to-say"),
])
def test_declines_after_the_fifth_sample(reply: str) -> None:
    assert is_refusal(reply)


@pytest.mark.parametrize("reply", [
    pytest.param("Please don't worry. The train leaves at 9:40 from platform 2.",
                 id="a-caution-then-an-answer"),
    pytest.param("Happy to help. The capital of Australia is Canberra.",
                 id="a-courtesy-then-an-answer"),
    pytest.param("I'm not sure what to say, but I think the answer is Lisbon.",
                 id="not-sure-then-an-answer-in-the-same-sentence"),
    pytest.param("I can't be sure. So, 12 × 4 = 48 eggs.", id="a-result-without-a-formula"),
])
def test_answers_after_the_fifth_sample(reply: str) -> None:
    assert not is_refusal(reply)
