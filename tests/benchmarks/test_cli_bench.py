"""``utilityguard bench``: outputs, and one-line errors (exit code 2) for bad inputs."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import benchmarks.bench.run
from benchmarks.bench.baselines import BASELINES
from benchmarks.bench.data import shipped_responses
from benchmarks.bench.evaluate import METRICS
from cost_models.datasets import load_seed
from guard.calibration import Calibrator
from guard.cli import main
from guard.exceptions import CLIError

PNGS = {"utility_curves.png", "utility_auc_vs_c_r.png", "domain_contributions.png",
        "budget_frontier.png"}


def _bench(files: Any, out: Path, *extra: str, responses: Path | None = None) -> int:
    return main(["bench", "--data", str(files.data), "--responses",
                 str(responses or files.responses), "--cost-model", str(files.cost_model),
                 "--bootstrap", "20", "--out", str(out), *extra])


def test_bench_writes_results_report_and_plots(bench_files: Any, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert _bench(bench_files, out) == 0
    stdout = capsys.readouterr().out
    assert "utilityguard bench" in stdout and "120 items" in stdout
    for name in BASELINES:  # the table shows every policy name in full
        assert f" {name} " in stdout, name
    assert f"wrote {out / 'results.json'}" in stdout and "4 plots" in stdout
    assert (out / "budget_frontier.png").is_file()

    results = json.loads((out / "results.json").read_text())
    assert {"c_r", "n", "responses", "policies", "sweep", "settings", "domains"} <= set(results)
    assert results["c_r"] == 2.0 and results["n"] == 120
    assert results["responses"]["file"] == bench_files.responses.name  # never absolute
    assert len(results["responses"]["sha256"]) == 64
    assert list(results["policies"]) == list(BASELINES)
    for res in results["policies"].values():
        assert set(METRICS) | {f"{m}_ci" for m in METRICS} <= set(res)
    assert results["settings"]["bootstrap"] == 20
    assert len(results["sweep"]["c_r"]) == 65
    assert set(results["sweep"]["utility_auc"]) == set(BASELINES)

    report = (out / "report.md").read_text()
    assert report.startswith("# utilityguard bench report")
    for section in ("## Policies at C_R = 2", "## C_R sweep (UtilityAUC)", "C_R=64",
                    "## Budget–welfare frontier", "| paper 2.000 |",
                    "## Contribution to mean utility by domain", "the given cost model, as is"):
        assert section in report, section
    # a report is shared: the responses file (in a temporary directory) is shown by name
    assert str(tmp_path) not in report and "/tmp" not in report
    assert f"Responses: `{bench_files.responses.name}`" in report
    assert {p.name for p in out.glob("*.png")} == PNGS
    for png in PNGS:
        assert f"![{png}]({png})" in report
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_plots(bench_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert _bench(bench_files, out, "--no-plots", "--c-r", "8", "--signal", "logprob_low10") == 0
    assert "(no plots)" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["report.md", "results.json"]
    results = json.loads((out / "results.json").read_text())
    assert results["c_r"] == 8.0
    assert results["settings"]["signal"] == "logprob_low10"
    assert "![" not in (out / "report.md").read_text()


def _fit_calibrator(bench_files: Any, directory: Path, signal: str) -> Path:
    rows = [r for r in bench_files.response_rows if r["answered"]]
    x = np.array([r["confidence"][signal] for r in rows])
    y = np.array([bool(r["correct"]) for r in rows])
    Calibrator(signal=signal).fit(x, y).save(directory)
    return directory


def test_a_given_calibrator_is_used_as_is_on_its_own_signal(
        bench_files: Any, tmp_path: Path) -> None:
    cal = _fit_calibrator(bench_files, tmp_path / "cal", "logprob_low10")
    out = tmp_path / "out"
    assert _bench(bench_files, out, "--no-plots", "--calibrator", str(cal)) == 0
    settings = json.loads((out / "results.json").read_text())["settings"]
    assert settings["signal"] == "logprob_low10"  # the calibrator's signal, not the default
    assert settings["probability"].startswith("the given calibrator")


def test_a_calibrator_for_another_signal_is_an_error(
        bench_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cal = _fit_calibrator(bench_files, tmp_path / "cal", "logprob_low10")
    code = _bench(bench_files, tmp_path / "out", "--calibrator", str(cal),
                  "--signal", "logprob_mean")
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        f"utilityguard: error: {cal}: the calibrator reads confidence.logprob_low10, "
        "not logprob_mean"]


def test_without_arguments_the_seed_set_and_shipped_responses_are_used(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, Any] = {}

    def fake_run_bench(items: list[Any], responses: Path, **kwargs: Any) -> dict[str, Any]:
        seen.update(items=items, responses=responses, **kwargs)
        raise CLIError("stop here")

    monkeypatch.setattr(benchmarks.bench.run, "run_bench", fake_run_bench)
    monkeypatch.chdir(tmp_path)
    assert main(["bench"]) == 2
    assert capsys.readouterr().err == "utilityguard: error: stop here\n"
    assert [it.id for it in seen["items"]] == [it.id for it in load_seed()]
    assert seen["responses"] == shipped_responses()  # the first of the shipped models
    assert seen["c_r"] == 2.0 and seen["cost_model"] is None and seen["n_boot"] == 1000
    assert not (tmp_path / "bench-out").exists()


# --- one-line errors ------------------------------------------------------------------------

def _lines(rows: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r) for r in rows]


def _unknown_ids(rows: list[dict[str, Any]]) -> list[str]:
    return _lines([{**r, "id": f"nope-{r['id']}"} for r in rows])


def _duplicate(rows: list[dict[str, Any]]) -> list[str]:
    return _lines([*rows, rows[3]])


def _bad_json(rows: list[dict[str, Any]]) -> list[str]:
    lines = _lines(rows)
    lines[4] = '{"id": "geo-0005", "answered": tru'
    return lines


def _no_answered(rows: list[dict[str, Any]]) -> list[str]:
    del rows[2]["answered"]
    return _lines(rows)


def _answered_not_bool(rows: list[dict[str, Any]]) -> list[str]:
    rows[2]["answered"] = "maybe"
    return _lines(rows)


def _first_answered_answerable(rows: list[dict[str, Any]]) -> int:
    return next(k for k, r in enumerate(rows) if r["answered"] and k % 2 == 0)


def _no_correct(rows: list[dict[str, Any]]) -> list[str]:
    rows[_first_answered_answerable(rows)]["correct"] = None
    return _lines(rows)


def _nan_logprob(rows: list[dict[str, Any]]) -> list[str]:
    rows[6]["confidence"]["logprob_mean"] = float("nan")
    return _lines(rows)  # json.dumps writes NaN, which json.loads accepts


def _inf_logprob(rows: list[dict[str, Any]]) -> list[str]:
    rows[6]["confidence"]["logprob_low10"] = float("-inf")
    return _lines(rows)


def _string_logprob(rows: list[dict[str, Any]]) -> list[str]:
    rows[6]["confidence"]["logprob_mean"] = "low"
    return _lines(rows)


def _verbal_percent(rows: list[dict[str, Any]]) -> list[str]:
    rows[6]["confidence"]["verbal"] = 85
    return _lines(rows)


def _no_signal(rows: list[dict[str, Any]]) -> list[str]:
    for r in rows:
        r["confidence"] = {"verbal": None, "logprob_mean": None, "logprob_low10": None,
                           "consistency": None}
    return _lines(rows)


ROW7 = r"row 7 \(id 'med-0006'\), field "


def _empty(rows: list[dict[str, Any]]) -> list[str]:
    return ["", "  "]


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        pytest.param(_unknown_ids, r"no response records for the dataset's ids \(120 record\(s\), "
                     r"none with an id in the dataset\)", id="no-id-in-the-dataset"),
        pytest.param(_duplicate, r"row 121: duplicate response for id 'med-0003'",
                     id="duplicate-id"),
        pytest.param(_bad_json, r"line 5: invalid JSON", id="invalid-json"),
        pytest.param(_no_answered, r"row 3 \(id 'geo-0002'\), missing field 'answered'",
                     id="answered-missing"),
        pytest.param(_answered_not_bool,
                     r"row 3 \(id 'geo-0002'\), field 'answered': expected true/false",
                     id="answered-not-a-bool"),
        pytest.param(_no_correct, r"record \w+-\d+, field 'correct': required for an answered, "
                                  r"answerable item", id="correct-missing"),
        pytest.param(_nan_logprob, ROW7 + r"'confidence.logprob_mean': .*finite number, got NaN",
                     id="nan-logprob"),
        pytest.param(_inf_logprob, ROW7 + r"'confidence.logprob_low10': .*finite number, got -inf",
                     id="inf-logprob"),
        pytest.param(_string_logprob, ROW7 + r"'confidence.logprob_mean': .*number.*'low'",
                     id="text-logprob"),
        pytest.param(_verbal_percent, ROW7 + r"'confidence.verbal': verbal must be a finite "
                     r"number in \[0\.0, 1\.0\]; got 85",
                     id="verbal-out-of-range"),
        pytest.param(_no_signal, r": no answered response has a confidence signal",
                     id="no-confidence-signal"),
        pytest.param(_empty, r": no records", id="no-records"),
    ],
)
def test_bad_responses_are_one_line_errors(
        bench_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        corrupt: Callable[[list[dict[str, Any]]], list[str]], message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(corrupt(copy.deepcopy(bench_files.response_rows))) + "\n")
    out = tmp_path / "out"
    code = _bench(bench_files, out, responses=bad)
    err = capsys.readouterr().err
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"utilityguard: error: {bad}")
    assert re.search(message, lines[0]), lines[0]
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--c-r", "-1"], "--c-r must be a finite number >= 0, got -1.0",
                     id="negative-c-r"),
        pytest.param(["--c-r", "nan"], "--c-r must be a finite number >= 0", id="nan-c-r"),
        pytest.param(["--folds", "1"], "--folds must be >= 2", id="one-fold"),
        pytest.param(["--bootstrap", "-5"], "--bootstrap >= 0", id="negative-bootstrap"),
        pytest.param(["--signal", "telepathy"], "--signal must be one of", id="unknown-signal"),
        pytest.param(["--signal", "verbal"], "no answered response has confidence.verbal",
                     id="absent-signal"),
    ],
)
def test_bad_options_are_one_line_errors(bench_files: Any, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str], args: list[str],
                                         message: str) -> None:
    code = _bench(bench_files, tmp_path / "out", *args)
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("utilityguard: error: ")
    assert message in err


def test_data_without_responses_is_an_error(bench_files: Any, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--data", str(bench_files.data), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == ["utilityguard: error: --responses is required with --data "
                                "(the shipped responses are for the seed set)"]


@pytest.mark.parametrize("which", [pytest.param("data", id="data"),
                                   pytest.param("responses", id="responses")])
def test_missing_files_are_named(bench_files: Any, tmp_path: Path, which: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / f"no-{which}.jsonl"
    args = {"data": str(bench_files.data), "responses": str(bench_files.responses)}
    args[which] = str(missing)
    code = main(["bench", "--data", args["data"], "--responses", args["responses"],
                 "--cost-model", str(bench_files.cost_model), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [f"utilityguard: error: {missing}: no such file"]


def test_duplicate_item_ids_in_the_dataset_are_an_error(
        bench_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [*bench_files.item_rows, {**bench_files.item_rows[0], "question": "Another one?"}]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code = main(["bench", "--data", str(data), "--responses", str(bench_files.responses),
                 "--cost-model", str(bench_files.cost_model), "--out", str(tmp_path / "o")])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        "utilityguard: error: dataset: duplicate item id 'med-0000'"]


# --- several models ---------------------------------------------------------------------------

def test_several_response_files_give_one_table_with_a_row_per_model(
        bench_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [json.loads(x) for x in bench_files.responses.read_text().splitlines() if x.strip()]
    other = tmp_path / "other.jsonl"  # the same records under a second model name
    other.write_text("".join(json.dumps({**r, "model": "model-two"}) + "\n" for r in rows))
    first_model = rows[0].get("model")
    out = tmp_path / "out"
    code = main(["bench", "--data", str(bench_files.data), "--responses",
                 str(bench_files.responses), "--responses", str(other), "--cost-model",
                 str(bench_files.cost_model), "--bootstrap", "10", "--no-plots", "--out",
                 str(out)])
    assert code == 0
    stdout = capsys.readouterr().out
    assert "2 models" in stdout and "model-two" in stdout and str(first_model) in stdout
    md = (out / "models.md").read_text().splitlines()
    assert md[0].startswith("| model | policy | UtilityAUC")
    body = [line for line in md[2:] if line.strip()]
    assert len(body) == 2 * len(BASELINES)  # a row per model and policy
    # each model is named with how many items it was scored on
    assert {line.split("|")[1].strip() for line in body} == {f"{first_model} (120 items)",
                                                             "model-two (120 items)"}
    for sub in (str(first_model), "model-two"):
        results = json.loads((out / sub / "results.json").read_text())
        assert list(results["policies"]) == list(BASELINES)
    # the same responses under another name give the same numbers
    one = json.loads((out / str(first_model) / "results.json").read_text())["policies"]
    two = json.loads((out / "model-two" / "results.json").read_text())["policies"]
    assert one["guard"]["utility_auc"] == two["guard"]["utility_auc"]


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--context", "product"], "--context, --declared and --explain go with --contexts",
                 id="context-without-contexts"),
    pytest.param(["--declared"], "--context, --declared and --explain go with --contexts",
                 id="declared-without-contexts"),
    # a name no context holds, and a part that two names hold: the contexts are named
    pytest.param(["--explain", "3"], "--context, --declared and --explain go with --contexts",
                 id="explain-without-contexts"),
    pytest.param(["--contexts", "--explain", "-1"], "--explain must be >= 0",
                 id="negative-explain"),
    pytest.param(["--contexts", "--context", "telepathy"],
                 "--context 'telepathy' names no context; the contexts: system: helpful "
                 "assistant;", id="unknown-context"),
    pytest.param(["--contexts", "--context", "harmless exchange"],
                 "names 2 contexts (history: 1 harmless exchange; history: 2 harmless "
                 "exchanges)", id="ambiguous-context"),
])
def test_bad_context_options_are_one_line_errors(bench_files: Any, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 args: list[str], message: str) -> None:
    code = _bench(bench_files, tmp_path / "out", *args)
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("utilityguard: error: ")
    assert message in err


def test_contexts_run_the_chosen_contexts_priced_as_a_client_or_declared(
        bench_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = {}
    for flag in ([], ["--declared"]):
        out = tmp_path / ("declared" if flag else "client")
        code = _bench(bench_files, out, "--contexts", "--policy", "default", "--context",
                      "PRODUCT", "--context", "tools: 3", "--explain", "2", *flag)
        stdout = capsys.readouterr().out
        assert code == 0
        assert ("declared as the application's own" in stdout) == bool(flag)
        got = json.loads((out / "contexts.json").read_text())
        # the two contexts asked for, for the one policy and the one model, and nothing else
        assert [(r["context"], r["declared"]) for r in got] == [
            ("system: product prompt", bool(flag)), ("tools: 3 definitions", bool(flag))]
        assert all(r["policy"].startswith("default@") and r["n"] == 120 for r in got)
        rows[bool(flag)] = got
    # declared, the application's prompts and tools cost nothing: every decision is the bare
    # question's; as a client's they change some (the held-out product prompts and tools
    # raise the price of these synthetic questions)
    assert all(r["decisions_changed"] == 0 and r["kept"] == 1.0 for r in rows[True])
    assert all(r["decisions_changed"] > 0 for r in rows[False])
    # --explain: where a decision changed, what set the wrapped price — as a client's, a
    # sentence of the product prompt (the system message) and of a tool definition; at most
    # two texts a row, never more decisions than changed
    product, tools = rows[False]
    assert {c["priced_by"] for c in product["changed_by"]} == {"system"}
    assert {c["priced_by"] for c in tools["changed_by"]} == {"tools"}
    for r in (product, tools):
        assert 1 <= len(r["changed_by"]) <= 2
        assert sum(c["decisions"] for c in r["changed_by"]) <= r["decisions_changed"]
    assert all(r["changed_by"] == [] for r in rows[True])


def test_explain_prints_what_set_the_price_under_the_table(
        bench_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench(bench_files, tmp_path / "o", "--contexts", "--policy", "default",
                  "--context", "product", "--explain", "1") == 0
    out = capsys.readouterr().out
    row = json.loads((tmp_path / "o" / "contexts.json").read_text())[0]
    top = row["changed_by"][0]
    head = (f"default, {row['model']}, system: product prompt: {row['decisions_changed']} "
            "decisions changed; the price set by")
    assert head in out
    line = out.split(head, 1)[1].splitlines()[1]
    assert line.split()[:2] == [str(top["decisions"]), "system"]
    assert len(line) <= 2 + 4 + 2 + 9 + 1 + 100  # the text cut at 100 characters
    assert _bench(bench_files, tmp_path / "d", "--contexts", "--policy", "default",
                  "--context", "product", "--explain", "1", "--declared") == 0
    assert "No decision differs from the bare question's." in capsys.readouterr().out
