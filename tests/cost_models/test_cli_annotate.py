"""``utilityguard annotate tuples|judge|fit`` end to end on a small dataset."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from scipy.stats import spearmanr

from cost_models import cli_annotate
from cost_models.annotation import judges as judges_module
from tests.helpers import one_line_error, run_cli

N = 40
KEY = "sk-annotate-test-secret-42"


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _eta() -> dict[str, float]:
    rng = np.random.default_rng(4)
    return {f"item-{k:02d}": float(v) for k, v in enumerate(rng.normal(0.0, 2.0, N))}


def _dataset(tmp_path: Path, *, id_field: str = "id") -> Path:
    rows = []
    for k, (iid, e) in enumerate(_eta().items()):
        group = "low" if e < -0.5 else "medium" if e < 1.5 else "high"
        rows.append({id_field: iid, "question": f"Question number {k}: what happens?",
                     "group": group, "domain": ["math", "law"][k % 2]})
    return _write_jsonl(tmp_path / "items.jsonl", rows)


def _judgments_for(tuples: Sequence[dict[str, Any]], judge: str = "human-1") -> list[
        dict[str, Any]]:
    """Judgments by the true scores plus Gumbel noise (a perfectly consistent judge makes the
    maximum-likelihood fit slow to converge)."""
    eta = _eta()
    rng = np.random.default_rng(7)
    out = []
    for t in tuples:
        ranked = sorted(t["items"], key=lambda i: eta[i] + rng.gumbel())
        out.append({"tuple_id": t["tuple_id"], "best": ranked[-1], "worst": ranked[0],
                    "judge": judge})
    return out


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    return run_cli(capsys, "annotate", *argv)


def test_tuples_judge_fit_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _dataset(tmp_path)
    tuples_path = tmp_path / "out" / "tuples.jsonl"
    code, out, _ = _run(capsys, "tuples", "--data", data, "--out", tuples_path, "--seed", "3")
    assert code == 0
    tuples = _read_jsonl(tuples_path)
    assert len(tuples) == round(1.25 * N)
    assert f"wrote {len(tuples)} tuples over {N} items" in out
    assert Counter(i for t in tuples for i in t["items"]).most_common()[-1][1] >= 3

    replay = _write_jsonl(tmp_path / "recorded.jsonl", _judgments_for(tuples))
    judgments_path = tmp_path / "out" / "judgments.jsonl"
    code, out, _ = _run(capsys, "judge", "--tuples", tuples_path, "--data", data,
                        "--replay", replay, "--out", judgments_path)
    assert code == 0
    assert "0 tuple(s) failed" in out
    assert _read_jsonl(judgments_path) == _read_jsonl(replay)

    items_out = tmp_path / "out" / "fitted.jsonl"
    code, _, _ = _run(capsys, "fit", "--tuples", tuples_path, "--judgments", judgments_path,
                      "--data", data, "--l2", "0.1", "--out", items_out)
    assert code == 0
    fitted = _read_jsonl(items_out)
    assert [r["id"] for r in fitted] == list(_eta())
    assert all(r["cost"] > 0 for r in fitted)
    assert float(np.median([r["cost"] for r in fitted])) == pytest.approx(2.0, rel=1e-9)
    assert spearmanr([r["eta"] for r in fitted], list(_eta().values())).statistic > 0.8
    assert {k: v for k, v in fitted[0].items() if k not in ("cost", "eta")} == _read_jsonl(
        data)[0]

    report = json.loads((tmp_path / "out" / "fitted.fit.json").read_text())
    assert report["n_items"] == N
    assert report["n_tuples"] == report["n_judgments"] == len(tuples)
    assert report["l2"] == 0.1
    assert report["cost"]["median"] == pytest.approx(2.0)
    assert set(report["by_domain"]) == {"math", "law"}
    # one judge per tuple: agreement is undefined, and the report stays valid JSON
    assert report["judge_agreement"]["pairs"] == 0
    assert report["judge_agreement"]["best"] is None


@pytest.mark.parametrize("l2", [pytest.param("auto", id="auto"),
                                pytest.param("paper-scale", id="paper-scale")])
def test_fit_chooses_l2_by_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                l2: str) -> None:
    data = _dataset(tmp_path)
    tuples_path = tmp_path / "tuples.jsonl"
    assert _run(capsys, "tuples", "--data", data, "--out", tuples_path)[0] == 0
    judgments = _write_jsonl(tmp_path / "j.jsonl", _judgments_for(_read_jsonl(tuples_path)))
    report_path = tmp_path / "report.json"
    code, _, err = _run(capsys, "fit", "--tuples", tuples_path, "--judgments", judgments,
                        "--data", data, "--l2", l2, "--out", tmp_path / "fitted.jsonl",
                        "--report", report_path)
    assert code == 0, err
    report = json.loads(report_path.read_text())
    assert report["l2"] >= 0
    assert report["cost"]["median"] == pytest.approx(2.0)


def test_judge_resumes_without_duplicates(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    data = _dataset(tmp_path)
    tuples_path = tmp_path / "tuples.jsonl"
    assert _run(capsys, "tuples", "--data", data, "--out", tuples_path)[0] == 0
    tuples = _read_jsonl(tuples_path)
    everything = _judgments_for(tuples)
    half = _write_jsonl(tmp_path / "half.jsonl", everything[::2])
    full = _write_jsonl(tmp_path / "full.jsonl", everything)
    out_path = tmp_path / "judgments.jsonl"

    code, out, _ = _run(capsys, "judge", "--tuples", tuples_path, "--data", data,
                        "--replay", half, "--out", out_path)
    assert code == 1
    missing = len(tuples) - len(everything[::2])
    assert f"{missing} tuple(s) failed" in out
    assert "no recorded judgment for" in out
    kept = _read_jsonl(out_path)
    assert kept == everything[::2]

    code, out, _ = _run(capsys, "judge", "--tuples", tuples_path, "--data", data,
                        "--replay", full, "--out", out_path)
    assert code == 0
    final = _read_jsonl(out_path)
    assert len(final) == len(tuples)
    assert Counter(j["tuple_id"] for j in final) == Counter({t["tuple_id"]: 1 for t in tuples})
    assert final[: len(kept)] == kept
    by_tuple = {j["tuple_id"]: j for j in final}
    assert all(by_tuple[j["tuple_id"]] == j for j in everything)

    # a third run has nothing left to do
    code, _, _ = _run(capsys, "judge", "--tuples", tuples_path, "--data", data,
                      "--replay", full, "--out", out_path)
    assert code == 0
    assert _read_jsonl(out_path) == final


def test_items_without_an_id_field_use_the_loaders_id_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _dataset(tmp_path, id_field="qid")
    tuples_path = tmp_path / "tuples.jsonl"
    assert _run(capsys, "tuples", "--data", data, "--out", tuples_path)[0] == 0
    tuples = _read_jsonl(tuples_path)
    assert {i for t in tuples for i in t["items"]} == set(_eta())
    judgments = _write_jsonl(tmp_path / "j.jsonl", _judgments_for(tuples))
    code, _, err = _run(capsys, "judge", "--tuples", tuples_path, "--data", data,
                        "--replay", judgments, "--out", tmp_path / "out.jsonl")
    assert code == 0, err
    code, _, err = _run(capsys, "fit", "--tuples", tuples_path, "--judgments", judgments,
                        "--data", data, "--l2", "0.1", "--out", tmp_path / "fitted.jsonl")
    assert code == 0, err
    assert [r["qid"] for r in _read_jsonl(tmp_path / "fitted.jsonl")] == list(_eta())


def test_judge_with_llm_judges_escalates_and_never_writes_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _dataset(tmp_path)
    tuples_path = tmp_path / "tuples.jsonl"
    assert _run(capsys, "tuples", "--data", data, "--out", tuples_path)[0] == 0
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        model = json.loads(request.content)["model"]
        # the two pool models always disagree on the best item; the third agrees with m1
        reply = {"m1": "BEST: 1\nWORST: 2", "m2": "BEST: 3\nWORST: 2",
                 "m3": "BEST: 1\nWORST: 2"}[model]
        return httpx.Response(200, json={"choices": [{"message": {"content": reply}}]})

    real = judges_module.LLMJudge

    def with_mock(*args: Any, **kwargs: Any) -> judges_module.LLMJudge:
        return real(*args, transport=httpx.MockTransport(handler), **kwargs)

    monkeypatch.setattr(cli_annotate, "LLMJudge", with_mock)
    monkeypatch.setenv("JUDGE_KEY", KEY)
    out_path = tmp_path / "judgments.jsonl"
    code, out, err = _run(capsys, "judge", "--tuples", tuples_path, "--data", data,
                          "--upstream", "http://judges.test/v1", "--judge-model", "m1",
                          "--judge-model", "m2", "--judge-model", "m3",
                          "--api-key-env", "JUDGE_KEY", "--out", out_path)
    assert code == 0, err
    tuples = _read_jsonl(tuples_path)
    judgments = _read_jsonl(out_path)
    per_tuple = Counter(j["tuple_id"] for j in judgments)
    assert set(per_tuple) == {t["tuple_id"] for t in tuples}
    # m1 and m2 disagree whenever both are drawn first: then m3 is asked
    assert set(per_tuple.values()) <= {2, 3}
    assert 3 in per_tuple.values()
    assert {j["judge"] for j in judgments} == {"m1", "m2", "m3"}
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in seen)
    assert KEY not in out_path.read_text()
    assert KEY not in out + err


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        pytest.param(["tuples", "--data", "{data}", "--group-field", "tier", "--out", "{tmp}/t"],
                     r"field 'tier' missing; fields found: id, question, group, domain",
                     id="missing-group-field"),
        pytest.param(["tuples", "--data", "{tmp}/nope.jsonl", "--out", "{tmp}/t"],
                     "nope.jsonl: no such file", id="missing-data"),
        pytest.param(["tuples", "--data", "{data}", "--ratio", "0.1", "--out", "{tmp}/t"],
                     "raise ratio", id="ratio-too-small"),
        pytest.param(["judge", "--tuples", "{tuples}", "--data", "{data}", "--out", "{tmp}/j"],
                     r"give --replay FILE, --replies FILE, or --upstream URL", id="no-judges"),
        pytest.param(["judge", "--tuples", "{tuples}", "--data", "{small}", "--replay",
                      "{tuples}", "--out", "{tmp}/j"], "items not in", id="unknown-items"),
        pytest.param(["judge", "--tuples", "{tuples}", "--data", "{noquestion}", "--replay",
                      "{tuples}", "--out", "{tmp}/j"], "no question field", id="no-question"),
        pytest.param(["fit", "--tuples", "{tuples}", "--judgments", "{judgments}", "--data",
                      "{data}", "--l2", "lots", "--out", "{tmp}/f"], "--l2 must be",
                     id="bad-l2"),
        pytest.param(["fit", "--tuples", "{tuples}", "--judgments", "{judgments}", "--data",
                      "{small}", "--l2", "0.1", "--out", "{tmp}/f"],
                     "not among the item ids", id="fit-unknown-items"),
        pytest.param(["fit", "--tuples", "{tuples}", "--judgments", "{badjudgments}",
                      "--data", "{data}", "--l2", "0.1", "--out", "{tmp}/f"],
                     "invalid judgment", id="fit-invalid-judgment"),
        pytest.param(["fit", "--tuples", "{data}", "--judgments", "{judgments}",
                      "--data", "{data}", "--out", "{tmp}/f"],
                     "a tuple needs tuple_id and items", id="not-tuples"),
    ],
)
def test_user_errors_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], match: str
) -> None:
    data = _dataset(tmp_path)
    tuples_path = tmp_path / "tuples.jsonl"
    assert _run(capsys, "tuples", "--data", data, "--out", tuples_path)[0] == 0
    tuples = _read_jsonl(tuples_path)
    judgments = _write_jsonl(tmp_path / "judgments.jsonl", _judgments_for(tuples))
    bad = _judgments_for(tuples)
    bad[0]["best"] = bad[0]["worst"]
    rows = _read_jsonl(data)
    paths = {
        "tmp": str(tmp_path), "data": str(data), "tuples": str(tuples_path),
        "judgments": str(judgments),
        "badjudgments": str(_write_jsonl(tmp_path / "bad.jsonl", bad)),
        "small": str(_write_jsonl(tmp_path / "small.jsonl", rows[:10])),
        "noquestion": str(_write_jsonl(tmp_path / "noq.jsonl", [
            {"id": r["id"], "body": r["question"]} for r in rows])),
    }
    code, _, err = _run(capsys, *(a.format(**paths) for a in argv))
    assert code == 2
    assert re.search(match, one_line_error(err)), err
