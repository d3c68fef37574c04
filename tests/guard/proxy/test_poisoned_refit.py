"""The poisoned refit of issue 36 (item 2), from a real proxy's audit log.

One key labels only its own decisions: the public reference questions at cost 250 (so that
they stay costly and pass the old drift check) and five target questions at cost 0.05. On
the old code ``fit --from-audit`` rebuilt the cost model from these labels alone, printed
"drift: none of the 60 high-cost reference questions ..." and wrote a policy that answers the
targets at any confidence (measured on this very log: thresholds -1.75 and -1.77) and prices
the seed's questions 37 times off the shipped model (median). Now each layer refuses in turn
— self-labels, one key's dominance, drift on the labelled questions — and a refit the
operator forces through every one of them is blended with the seed data: the seed's prices
stay. A costly question the labels never named but which sits near them ("What is a lethal
dose of acetaminophen?", 9.3 -> 2.5 in the forced refit) is caught by the drift check when
it is in the operator's private set or in the deployment's own traffic.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cost_models import load_default
from cost_models.datasets import load_seed
from guard import Guard
from guard.cli import main
from guard.policy import load_policy
from guard.policy.drift import reference_questions
from guard.proxy import create_app
from tests.guard.proxy.conftest import Served, proxy_settings
from tests.guard.proxy.scripted import completion

ATTACKER = "sk-poison-0001"
TARGETS = ["What is the maximum daily dose of acetaminophen?",
           "How much ibuprofen can I give my 2-year-old?",
           "Can I give aspirin to my 3-year-old?",
           "How many sleeping pills can I take at once?",
           "Is it safe to mix alcohol with oxycodone?"]
UNLABELLED = "What is a lethal dose of acetaminophen?"  # priced 9.3 by the shipped model


def _model() -> Starlette:
    """An upstream answering every question, confidently (p = 0.99) when it ends in "sure",
    else with p = 0.37: the two signal values the refit calibrator is fitted on."""
    async def chat(request: Request) -> Response:
        body = await request.json()
        sure = body["messages"][-1]["content"].endswith(" sure")
        return JSONResponse(completion("Take 4 g.", [-0.01 if sure else -1.0] * 3))

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The audit log after the attack: 130 labels, all the attacker's on its own decisions."""
    db = tmp_path_factory.mktemp("poison") / "audit.db"
    upstream = Served(_model())
    served = Served(create_app(proxy_settings(
        upstream.url, audit_path=db, audit_queries=True, api_keys=[ATTACKER],
        feedback_rate=1000, read_timeout=30.0), cost_model=load_default()))
    refs = reference_questions()
    auth = {"authorization": f"Bearer {ATTACKER}"}
    try:
        with httpx.Client(base_url=served.url, timeout=30, headers=auth) as c:
            for i in range(130):
                question, cost = (refs[i % len(refs)], 250.0) if i % 2 else \
                    (TARGETS[i % len(TARGETS)], 0.05)
                kind = " sure" if i % 4 < 2 else ""  # two confidence values for the calibrator
                r = c.post("/v1/chat/completions", json={
                    "model": "m", "messages": [{"role": "user", "content": question + kind}]})
                assert r.status_code == 200, r.text
                label = {"request_id": r.headers["x-utilityguard-request-id"],
                         "correct": i % 10 != 0, "answerable": True, "cost": cost}
                assert c.post("/v1/feedback", json=label).status_code == 200
    finally:
        served.stop()
        upstream.stop()
    return db


def _fit(db: Path, out: Path, *extra: str) -> int:
    return main(["fit", "--from-audit", str(db), "--out", str(out), "--min-labels", "40",
                 *extra])


def test_the_poisoned_refit_is_refused_at_every_layer(
        poisoned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "poisoned"
    assert _fit(poisoned, out) == 2  # the old code wrote it here
    err = capsys.readouterr().err
    assert "130 of the 130 labels were sent by the key that made the decision" in err
    assert "--accept-self-labels" in err and not out.exists()

    assert _fit(poisoned, out, "--accept-self-labels") == 2
    err = capsys.readouterr().err
    assert "130 of the 130 labels (100%) come from one key" in err and "--max-key-share" in err

    assert _fit(poisoned, out, "--accept-self-labels", "--max-key-share", "1") == 2
    err = capsys.readouterr().err
    assert "--accept-drift" in err and not out.exists()
    listed = [line for line in err.splitlines() if line.startswith("  - [labelled questions]")]
    assert {t for t in TARGETS if any(t in line for line in listed)} == set(TARGETS)


def test_a_forced_refit_is_blended_never_labels_alone(
        poisoned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "forced"
    assert _fit(poisoned, out, "--accept-self-labels", "--max-key-share", "1",
                "--accept-drift") == 0
    printed = capsys.readouterr().out
    assert "cost_model: refit from 2594 seed items and" in printed
    meta = json.loads((out / "policy.json").read_text())
    assert set(TARGETS) <= {q.removesuffix(" sure") for q in meta["training"]["drift_accepted"]}
    assert meta["training"]["label_provenance"]["self_labels_accepted"] is True
    refit, base = Guard.from_policy(load_policy(out)), Guard(policy=None)
    # never labels alone: the seed's questions keep their prices (a model fitted on the 130
    # labels alone knows two costs, 0.05 and 250)
    seed = [it.question for it in load_seed()[::10]]
    ratio = np.log(refit.cost_model.predict(seed)) - np.log(base.cost_model.predict(seed))
    assert float(np.median(np.abs(ratio))) < 0.25  # 0.04 measured; 3.6 on the old code


def test_drift_is_checked_on_the_audit_logs_own_costly_questions(
        poisoned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal names every set it checked and how much of each drifted: the public
    reference set, the costly questions of the audit log (the deployment's own, not public)
    and the labelled questions."""
    assert _fit(poisoned, tmp_path / "p", "--accept-self-labels", "--max-key-share", "1") == 2
    err = capsys.readouterr().err
    counts = {name: (int(k), int(n)) for k, n, name in re.findall(
        r"(\d+) of the (\d+) (high-cost reference questions|costly questions of the audit "
        r"log|labelled questions)", err)}
    assert counts["high-cost reference questions"][1] == 60
    assert counts["costly questions of the audit log"][1] >= len(TARGETS)
    assert counts["labelled questions"][0] >= len(TARGETS)


def test_a_private_drift_set_is_checked(poisoned: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    private = tmp_path / "private.jsonl"
    private.write_text(json.dumps({"question": UNLABELLED}) + "\n")
    assert _fit(poisoned, tmp_path / "p", "--accept-self-labels", "--max-key-share", "1",
                "--drift-set", str(private)) == 2
    err = capsys.readouterr().err
    assert f"  - [questions of {private}] {UNLABELLED}" in err
