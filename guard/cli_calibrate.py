"""``utilityguard calibrate``: fit a confidence calibrator on graded response records.

Reads response records (docs/design.md's contract; JSONL, also CSV / parquet), keeps the answered
ones whose ``confidence.<signal>`` is a number, fits a :class:`guard.calibration.Calibrator`
and writes it with its integrity sidecar. Before writing, it reports ECE-10 and the Brier score
of the raw mapping (``exp`` of a log-probability, or the stated probability) and of the
calibrated probabilities, both on held-out folds (nested cross-validation: the method choice of
``--method auto`` is made inside each training fold).

Only answered records are used: a refusal has no answer whose correctness a confidence could
predict. ``correct`` must be a bool on every answered record; an answer to a refusal-required
item is graded ``correct = false`` by the collector, so it counts as incorrect.

When the calibrated probabilities score a worse held-out Brier than the raw mapping (too few
records for the method to generalize), the calibrator is still written, but the command warns
on stderr and the sidecar's evaluation says ``"worse_than_raw": true``: serving without
``--calibrator`` (the raw signal, ``p_source: uncalibrated``) would then decide better.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cost_models.persistence import sha256_file
from guard.calibration import (
    LOG_SIGNALS,
    METHODS,
    Calibrator,
    brier,
    cross_val_probability,
    ece,
    raw_probability,
)
from guard.calibration.scoring import FloatArray
from guard.decision_records import REPLY_SIGNALS
from guard.exceptions import CLIError
from guard.response_records import ResponseRecord, read_response_records

#: Fewer usable records than this give a calibrator too noisy to trust.
MIN_RECORDS = 20
MIN_PER_CLASS = 3


def register(sub: Any) -> None:
    """Add the ``calibrate`` subcommand to the ``utilityguard`` parser."""
    p = sub.add_parser(
        "calibrate",
        help="fit a confidence calibrator on graded response records",
        description=(
            "Fit a map from a confidence signal to P(correct) on the answered records of "
            "--responses (isotonic, Platt or histogram binning; --method auto picks the lowest "
            "cross-validated Brier score), report ECE-10 and Brier before and after on held-out "
            "folds, and write calibrator.npz with its sidecar to --out."
        ),
    )
    p.add_argument("--responses", required=True, type=Path,
                   help="graded response records (.jsonl, .csv or .parquet)")
    p.add_argument("--signal", default="logprob_mean", choices=REPLY_SIGNALS,
                   help="the confidence signal to calibrate (default logprob_mean)")
    p.add_argument("--method", default="auto", choices=("auto", *METHODS),
                   help="calibration method (default auto)")
    p.add_argument("--cv", type=int, default=5, help="cross-validation folds (5)")
    p.add_argument("--seed", type=int, default=0, help="fold shuffling seed (0)")
    p.add_argument("--out", required=True, type=Path, help="directory to write the calibrator to")
    p.set_defaults(func=run)


def usable_pairs(records: list[ResponseRecord], signal: str, source: str
                 ) -> tuple[FloatArray, np.ndarray[Any, np.dtype[np.bool_]], int]:
    """(signal values, correct, number of answered records) of the answered records with the
    signal; :class:`CLIError` when they cannot train a calibrator."""
    xs: list[float] = []
    ys: list[bool] = []
    answered = 0
    with_signal = 0
    for n, rec in enumerate(records, start=1):
        value = rec.confidence.get(signal)
        with_signal += value is not None
        if not rec.answered:
            continue
        answered += 1
        if rec.correct is None:
            raise CLIError(
                f"{source}: record {rec.id or n!r} is answered but 'correct' is missing; "
                "grade every answered record (true/false) first"
            )
        if value is not None:
            xs.append(value)
            ys.append(rec.correct)
    if with_signal == 0:
        raise CLIError(
            f"{source}: no record has confidence.{signal}; collect it first "
            f"(choose --signal from {', '.join(REPLY_SIGNALS)})"
        )
    if len(xs) < MIN_RECORDS:
        raise CLIError(
            f"{source}: only {len(xs)} answered records with confidence.{signal} "
            f"(of {len(records)} records, {answered} answered); at least {MIN_RECORDS} are needed"
        )
    n_correct = sum(ys)
    if n_correct in (0, len(ys)):
        which = "correct" if n_correct else "incorrect"
        raise CLIError(
            f"{source}: all {len(ys)} usable records are {which}; calibration needs both "
            "correct and incorrect answers"
        )
    if min(n_correct, len(ys) - n_correct) < MIN_PER_CLASS:
        raise CLIError(
            f"{source}: {n_correct} correct and {len(ys) - n_correct} incorrect usable records; "
            f"at least {MIN_PER_CLASS} of each are needed"
        )
    return np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.bool_), answered


def _metrics(prob: Any, correct: Any) -> dict[str, float]:
    return {"ece10": round(ece(prob, correct), 6), "brier": round(brier(prob, correct), 6)}


def run(args: argparse.Namespace) -> int:
    """Fit, evaluate and write the calibrator; print a before/after table."""
    source = str(args.responses)
    x, y, answered = usable_pairs(read_response_records(args.responses), args.signal, source)
    cal = Calibrator(method=args.method, signal=args.signal, cv=args.cv, random_state=args.seed)
    before = _metrics(raw_probability(args.signal, x), y)
    after = _metrics(cross_val_probability(cal, x, y), y)
    cal.fit(x, y)
    raw_name = "exp(signal)" if args.signal in LOG_SIGNALS else "signal as p"
    worse = after["brier"] > before["brier"]
    evaluation = {"held_out": "nested cross-validation", "folds": args.cv, "seed": args.seed,
                  "raw_mapping": raw_name, "before": before, "after": after,
                  "worse_than_raw": worse}
    sidecar = cal.save(args.out, metadata={
        "evaluation": evaluation,
        "responses": source,
        "responses_sha256": sha256_file(args.responses),
        "command": "utilityguard calibrate " + shlex.join(
            ["--responses", source, "--signal", args.signal, "--method", args.method,
             "--cv", str(args.cv), "--seed", str(args.seed), "--out", str(args.out)]),
    })
    tried = ", ".join(f"{m} {b:.4f}" for m, b in cal.cv_brier_.items())
    print(f"{args.signal}: {len(x)} of {answered} answered records ({int(y.sum())} correct); "
          f"method {cal.method_} (cv Brier: {tried})")
    print(f"{'held-out folds':<24}{'ECE-10':>10}{'Brier':>10}")
    print(f"{'before (' + raw_name + ')':<24}{before['ece10']:>10.4f}{before['brier']:>10.4f}")
    print(f"{'after (' + cal.method_ + ')':<24}{after['ece10']:>10.4f}{after['brier']:>10.4f}")
    print(f"wrote {sidecar.with_suffix('.npz')} and {sidecar}")
    if worse:
        print(f"utilityguard: warning: the calibrator is worse than the raw signal on held-out "
              f"folds (Brier {before['brier']:.4f} -> {after['brier']:.4f}, {len(x)} records); "
              f"collect more graded responses, or serve without --calibrator (the raw "
              f"{raw_name} decides better)", file=sys.stderr)
    return 0
