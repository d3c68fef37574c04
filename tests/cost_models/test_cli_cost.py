"""``utilityguard cost train|eval|predict`` on a parquet file with unusual column names."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cost_models.model_io import ARTIFACT, load_model
from cost_models.persistence import read_sidecar, save_artifact
from guard.cli import main
from policies import answer_threshold
from tests.helpers import one_line_error, run_cli

WORDS = {"insulin": 2.5, "dose": 2.0, "bleach": 2.2, "loan": 1.0, "tax": 0.8, "court": 1.2,
         "river": -1.5, "capital": -1.2, "poem": -1.8, "trivia": -2.0, "sum": -0.8,
         "planet": -1.0}
ODD_COLUMNS = ["prompt_text", "L_value", "origin", "qid"]


def _parquet(path: Path, n: int = 48, *, answerable: bool = False) -> Path:
    rng = np.random.default_rng(5)
    names = list(WORDS)
    texts, cost = [], []
    for k in range(n):
        picked = rng.choice(len(names), size=3, replace=False)
        texts.append(" ".join(names[i] for i in picked) + f" question {k}?")
        cost.append(float(np.exp(sum(WORDS[names[i]] for i in picked) + rng.normal(0, 0.3))))
    columns: dict[str, Any] = {"prompt_text": texts, "L_value": cost,
                               "origin": [f"src{k % 4}" for k in range(n)],
                               "qid": [f"q{k}" for k in range(n)]}
    if answerable:
        columns["should_abstain"] = [k % 3 == 0 for k in range(n)]
        columns["batch"] = [f"b{k % 5}" for k in range(n)]
    pq.write_table(pa.table(columns), path)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    return run_cli(capsys, "cost", *argv)


COLS = ("--text-col", "prompt_text", "--cost-col", "L_value")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A model trained once for the module: ``(model_dir, data)``."""
    tmp = tmp_path_factory.mktemp("cost")
    data = _parquet(tmp / "bench.parquet")
    model_dir = tmp / "model"
    code = main(["cost", "train", "--data", str(data), *COLS, "--folds", "3", "--compare", "",
                 "--out", str(model_dir)])
    assert code == 0
    return model_dir, data


def test_train_writes_a_model_directory(trained: tuple[Path, Path]) -> None:
    model_dir, data = trained
    assert sorted(p.name for p in model_dir.iterdir()) == [
        "README.md", f"{ARTIFACT}.json", f"{ARTIFACT}.npz"]
    meta = read_sidecar(model_dir, name=ARTIFACT)
    assert meta["n_train"] == 48
    assert meta["data"] == str(data)
    assert meta["cv_folds"] == 3
    assert meta["cv"]["alternatives"] == []
    selected = meta["cv"]["selected"]
    assert selected["spearman"] > 0.5
    assert 0.0 <= selected["decision_agreement"] <= 1.0
    assert len(meta["training_data_sha256"]) == 64
    card = (model_dir / "README.md").read_text()
    assert f"{selected['spearman']:.3f}" in card
    model = load_model(model_dir)
    assert meta["residual_var"] == pytest.approx(model.residual_var_)


def test_train_prints_the_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _parquet(tmp_path / "b.parquet", answerable=True)
    code, out, err = _run(capsys, "train", "--data", data, *COLS, "--folds", "3",
                          "--compare", "", "--group-col", "batch", "--out", tmp_path / "m")
    assert code == 0, err
    assert re.search(r"affix-ridge ridge=[\d.]+: grouped-CV Spearman [\d.-]+, MAE\(log L\) "
                     r"[\d.]+, decision agreement [\d.]+, decision regret [\d.]+", out)
    assert f"wrote {tmp_path / 'm'}" in out
    assert read_sidecar(tmp_path / "m", name=ARTIFACT)["group_col"] == "batch"


def test_eval_prints_json_metrics(trained: tuple[Path, Path],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    model_dir, data = trained
    code, out, err = _run(capsys, "eval", "--model", model_dir, "--data", data, *COLS)
    assert code == 0, err
    result = json.loads(out)
    assert result["n"] == 48
    assert result["c_r"] == 2.0
    assert result["spearman"] > 0.8  # in-sample
    assert result["mae_log"] >= 0
    assert 0.0 <= result["decision_agreement"] <= 1.0
    assert result["decision_regret"] >= 0


def test_predict_prints_json_lines(trained: tuple[Path, Path],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    model_dir, _ = trained
    questions = ["insulin dose bleach question?", "river trivia poem question?"]
    code, out, err = _run(capsys, "predict", "--model", model_dir, "--c-r", "2", *questions)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["question"] for r in rows] == questions
    model = load_model(model_dir)
    expected = model.predict(questions)
    for row, want in zip(rows, expected, strict=True):
        assert row["cost"] == pytest.approx(want, abs=1e-6)
        lo, hi = row["interval"]
        assert 0 < lo < hi
        assert row["level"] == 0.8 and row["c_r"] == 2.0
        assert row["threshold"] == pytest.approx(answer_threshold(row["cost"], 2.0), abs=1e-6)
    assert rows[0]["cost"] > rows[1]["cost"]


def test_predict_with_another_c_r_and_level(trained: tuple[Path, Path],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    model_dir, _ = trained
    narrow = _run(capsys, "predict", "--model", model_dir, "--level", "0.5", "dose?")[1]
    wide = _run(capsys, "predict", "--model", model_dir, "--level", "0.95", "--c-r", "0.5",
                "dose?")[1]
    a, b = json.loads(narrow), json.loads(wide)
    assert b["interval"][0] < a["interval"][0] < a["interval"][1] < b["interval"][1]
    assert b["threshold"] == pytest.approx(answer_threshold(b["cost"], 0.5), abs=1e-6)


def test_predict_with_the_default_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "predict", "What is the maximum safe dose of warfarin?",
                          "What is the capital of Peru?")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 2
    assert all(r["cost"] > 0 for r in rows)
    assert rows[0]["cost"] > rows[1]["cost"]
    for row in rows:
        assert row["threshold"] == pytest.approx(answer_threshold(row["cost"], 2.0), abs=1e-6)


def test_predict_reads_questions_from_stdin(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("first question?\n\nsecond question?\n"))
    code, out, _ = _run(capsys, "predict")
    assert code == 0
    assert [json.loads(line)["question"] for line in out.splitlines()] == [
        "first question?", "second question?"]


def test_predict_without_questions(capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, _, err = _run(capsys, "predict")
    assert code == 2
    assert "give questions as arguments" in one_line_error(err)


def test_eval_the_default_model_on_the_seed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "eval", "--data", "seed")
    assert code == 0, err
    result = json.loads(out)
    assert result["n"] >= 1200
    assert result["spearman"] > 0.5


def test_unknown_layout_exits_2_listing_the_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _parquet(tmp_path / "odd.parquet")
    code, _, err = _run(capsys, "train", "--data", data, "--out", tmp_path / "m")
    assert code == 2
    line = one_line_error(err)
    assert "cannot map required field(s) question, cost" in line
    assert f"columns found: {', '.join(ODD_COLUMNS)}" in line
    assert "--text-col/--cost-col" in line
    assert not (tmp_path / "m").exists()


def test_a_wrong_column_name_exits_2_with_the_real_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _parquet(tmp_path / "odd.parquet")
    code, _, err = _run(capsys, "eval", "--data", data, "--text-col", "prompt",
                        "--cost-col", "L_value")
    assert code == 2
    line = one_line_error(err)
    assert "column 'prompt' given for 'question' is not in the data" in line
    assert line.endswith(f"columns found: {', '.join(ODD_COLUMNS)}")


def test_a_bad_answerability_value_is_not_hidden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"prompt_text": ["a?", "b?"], "L_value": [1.0, 2.0],
                             "answerable": ["yes", "maybe"]}), path)
    code, _, err = _run(capsys, "eval", "--data", path, *COLS)
    assert code == 2
    assert "row 2, field answerable: expected a boolean" in one_line_error(err)


def test_a_tampered_model_exits_2_mentioning_trust(
    trained: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model_dir, data = trained
    copy = tmp_path / "model"
    copy.mkdir()
    for f in model_dir.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    artifact = copy / f"{ARTIFACT}.npz"
    artifact.write_bytes(artifact.read_bytes() + b"\n")
    for argv in (["predict", "--model", copy, "q?"],
                 ["eval", "--model", copy, "--data", data, *COLS]):
        code, _, err = _run(capsys, *argv)
        assert code == 2
        line = one_line_error(err)
        assert "sha256" in line and "--trust" in line


def test_trust_loads_a_model_whose_sidecar_differs(
    trained: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model_dir, _ = trained
    model = load_model(model_dir)
    save_artifact(model, tmp_path, name=ARTIFACT)
    side = tmp_path / f"{ARTIFACT}.json"
    meta = json.loads(side.read_text())
    meta["versions"]["scikit-learn"] = "0.1.0"
    side.write_text(json.dumps(meta))
    code, _, err = _run(capsys, "predict", "--model", tmp_path, "q?")
    assert code == 2
    assert "made with scikit-learn 0.1.0" in one_line_error(err)
    code, out, _ = _run(capsys, "predict", "--model", tmp_path, "--trust", "q?")
    assert code == 0
    assert json.loads(out)["cost"] > 0


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        pytest.param(["--compare", "forest"], "--compare: unknown kind(s) forest", id="compare"),
        pytest.param(["--folds", "20", "--compare", ""], "too few to train with 20-fold CV",
                     id="too-few-items"),
        # "origin" is mapped to the contract field "source": grouping by it must say so, not
        # fall back silently
        pytest.param(["--group-col", "origin"], "--group-col origin: no such field",
                     id="mapped-group-col"),
        pytest.param(["--group-col", "tier"], "fields: id, question, answerable, cost",
                     id="unknown-group-col"),
    ],
)
def test_train_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           extra: list[str], match: str) -> None:
    data = _parquet(tmp_path / "b.parquet")
    code, _, err = _run(capsys, "train", "--data", data, *COLS, *extra, "--out", tmp_path / "m")
    assert code == 2
    assert match in one_line_error(err)


def test_missing_model_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "predict", "--model", tmp_path / "nothing", "q?")
    assert code == 2
    assert "no sidecar" in one_line_error(err)


def _drop_columns(path: Path, out: Path, *drop: str) -> Path:
    table = pq.read_table(path)
    pq.write_table(table.drop(list(drop)), out)
    return out


def test_train_without_a_source_column_says_its_folds_were_shuffled(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _drop_columns(_parquet(tmp_path / "b.parquet"), tmp_path / "nosrc.parquet", "origin")
    code, out, err = _run(capsys, "train", "--data", data, *COLS, "--folds", "3",
                          "--compare", "", "--out", tmp_path / "m")
    assert code == 0, err
    assert "cv: shuffled 3-fold KFold, NOT grouped: the data has no 'source' column" in out
    assert "shuffled-CV Spearman" in out and "grouped-CV" not in out
    assert "cross-validation was not grouped by source" in err
    meta = read_sidecar(tmp_path / "m", name=ARTIFACT)
    assert meta["cv"]["grouped"] is False
    card = (tmp_path / "m" / "README.md").read_text()
    assert "NOT grouped: the data has no 'source' column" in card
    assert "holds out whole" not in card


def test_train_with_fewer_groups_than_folds_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _parquet(tmp_path / "b.parquet", answerable=True)  # batch has 5 values
    code, out, err = _run(capsys, "train", "--data", data, *COLS, "--folds", "6",
                          "--compare", "", "--group-col", "batch", "--out", tmp_path / "m")
    assert code == 0, err
    assert "NOT grouped: only 5 distinct batch value(s), fewer than 6 folds" in out
    card = (tmp_path / "m" / "README.md").read_text()
    assert "only 5 distinct batch value(s)" in card and "holds out whole" not in card


def test_train_with_sources_records_grouped_folds(trained: tuple[Path, Path]) -> None:
    model_dir, _ = trained
    meta = read_sidecar(model_dir, name=ARTIFACT)
    assert meta["cv"]["grouped"] is True  # the parquet's 'origin' maps to source: 4 values
    assert meta["cv"]["scheme"] == ("grouped 3-fold CV: each fold holds out whole sources "
                                    "(4 distinct)")
    assert "Each fold holds out whole `source` values" in (model_dir / "README.md").read_text()
