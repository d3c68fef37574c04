"""The policy artifact: one folder holding everything a decision needs.

::

    policy.json            name, C_R, signal, confidence source, the sha256 of every part,
                           library versions, training data, cross-fitted figures, command
    README.md              the card (rendered from policy.json)
    calibrator/            calibrator.npz + calibrator.json (signal -> P(correct))
    answerability/         answerability.npz + .json (question -> P(answerable)); absent
                           when the training data had one class (then a constant alpha)
    cost_model/            a saved cost model, or absent when policy.json references the
                           shipped default by its sha256
    (policy.json)          ``cost_scale``, optional: the knots of the map from the price to
                           ``E[L | price]`` (:mod:`guard.cost_scale`), numbers only;
                           ``alpha_scale``, optional: two numbers (:mod:`guard.alpha_scale`)

Every part is data (arrays in ``.npz`` read without pickle, parameters in JSON, rebuilt by
classes this package names: :mod:`cost_models.persistence`), so loading runs no code from the
folder. Loading also checks integrity: every file's sha256 must equal the one in
``policy.json`` and its own sidecar, and the scikit-learn version must match; an old pickle
part is refused; ``trust=True`` skips the checks and loads an old pickle with a warning
(only for a policy you made). A policy is
named ``NAME@SHA8``: its name and the first 8 hex digits of the sha256 of its ``policy.json``
(which holds the hashes of all the parts), so the name identifies every byte of the policy.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from cost_models.answerability import AnswerabilityModel
from cost_models.model_io import ARTIFACT as COST_ARTIFACT
from cost_models.model_io import default_model_dir, load_model, save_model
from cost_models.persistence import (
    load_artifact,
    read_sidecar,
    save_artifact,
    sha256_file,
    versions,
)
from cost_models.regressor import CostRegressor
from guard.alpha_scale import AlphaScale
from guard.calibration import Calibrator
from guard.calibration.multi import MULTI_FILE, MultiSignalCalibrator
from guard.cost_scale import CostScale
from guard.exceptions import ArtifactError, ConfigError
from guard.protocols import CostModel

log = logging.getLogger(__name__)
FORMAT = "utilityguard-policy"
FORMAT_VERSION = 1
POLICY_FILE = "policy.json"
SHIPPED_DIR = "policy/data"
ANSWERABILITY = "answerability"


def shipped_dir() -> Path:
    """Where the shipped policies live (package data)."""
    return Path(str(resources.files("guard").joinpath(SHIPPED_DIR)))


def shipped_policies() -> list[str]:
    """Names of the policies shipped with the package."""
    root = shipped_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / POLICY_FILE).is_file())


def resolve(path_or_name: str | os.PathLike[str]) -> Path:
    """The directory of a policy given as a path or as the name of a shipped policy.

    A shipped name (a ``str`` among :func:`shipped_policies`) resolves inside the package
    only: a folder of that name in the working directory never stands in for it (load it as
    ``./default``). Anything else is a path."""
    if isinstance(path_or_name, str) and path_or_name in shipped_policies():
        if Path(path_or_name).is_dir():
            log.warning("%r names the shipped policy; the folder ./%s in the working "
                        "directory is not loaded (pass ./%s for it)", path_or_name,
                        path_or_name, path_or_name)
        return shipped_dir() / path_or_name
    p = Path(path_or_name)
    try:
        if (p / POLICY_FILE).is_file():
            return p
        exists = p.exists()
    except (OSError, ValueError):  # a NUL byte, a name too long
        raise ConfigError(f"{str(path_or_name)[:200]!r}: not a usable path") from None
    if exists:
        raise ConfigError(f"{p}: no {POLICY_FILE}; not a utilityguard policy directory")
    names = ", ".join(shipped_policies()) or "none"
    shown = str(path_or_name)[:200]
    shown = shown if shown.isprintable() else repr(shown)
    raise ConfigError(f"{shown}: no such policy directory or shipped policy "
                      f"(shipped: {names})")


def inside(root: Path, rel: str, what: str) -> Path:
    """``root / rel`` when ``rel`` is a relative path that stays inside ``root`` (symlinks
    resolved); :class:`ArtifactError` naming ``what`` otherwise."""
    candidate = Path(rel)
    if not rel or "\x00" in rel or candidate.is_absolute() or ".." in candidate.parts:
        raise ArtifactError(f"{root / POLICY_FILE}: {what} {rel!r} is not a path inside the "
                            "policy folder")
    target = root / candidate
    if not target.resolve().is_relative_to(root.resolve()):
        raise ArtifactError(f"{root / POLICY_FILE}: {what} {rel!r} leads outside the policy "
                            "folder")
    return target


def _default_cost_sha() -> str:
    return str(read_sidecar(default_model_dir(), name=COST_ARTIFACT)["sha256"])


@dataclass
class Policy:
    """A fitted policy (the artifact; its :attr:`label`, ``NAME@SHA8``, is what a decision
    records): what :meth:`guard.Guard.from_policy` decides with.

    ``cost_model`` ``None`` means the shipped default cost model. ``cost_model_ref`` says how
    a saved policy refers to its cost model (``{"source": "shipped-default", "sha256": ...}``
    or ``{"source": "file", "dir": "cost_model"}``); ``None`` means "save a copy" (or the
    shipped default when ``cost_model`` is ``None``). ``sha256`` is that of ``policy.json``
    once saved or loaded (``None`` for a policy only held in memory, e.g. a bench fold's).
    """

    name: str
    c_r: float
    signal: str
    confidence: str
    calibrator: Calibrator | MultiSignalCalibrator
    answerability: AnswerabilityModel | None = None
    alpha_constant: float | None = None
    cost_model: CostModel | None = None
    cost_model_ref: dict[str, Any] | None = None
    #: the price -> ``E[L | price]`` map fitted with the cost model (:mod:`guard.cost_scale`)
    cost_scale: CostScale | None = None
    #: the recalibration of ``answerability`` for unseen kinds (:mod:`guard.alpha_scale`)
    alpha_scale: AlphaScale | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    sha256: str | None = None
    path: Path | None = None

    @property
    def signals(self) -> tuple[str, ...]:
        """Every confidence signal the policy's calibrator reads (one, or a multi-signal
        calibrator's)."""
        return tuple(self.calibrator.signals)

    @property
    def label(self) -> str:
        """``NAME@SHA8`` (``NAME@unsaved`` before it is saved)."""
        return f"{self.name}@{self.sha256[:8] if self.sha256 else 'unsaved'}"

    def alpha_of(self, questions: list[str]) -> list[float]:
        """``P(answerable)`` of each question (the constant when there is no model)."""
        if self.answerability is None:
            return [1.0 if self.alpha_constant is None else self.alpha_constant] * len(questions)
        return [float(a) for a in self.answerability.predict_alpha(questions)]


def _files(root: Path, sub: str) -> dict[str, str]:
    return {f"{sub}/{f.name}": sha256_file(f) for f in sorted((root / sub).iterdir())
            if f.is_file()}


def save_policy(policy: Policy, directory: str | os.PathLike[str], *,
                card: dict[str, Any] | None = None) -> Path:
    """Write ``policy`` to ``directory`` (see the module docstring); return ``policy.json``.
    ``card`` adds free-form fields (training data, evaluation, command) to ``policy.json``."""
    root = Path(directory)
    if root.exists() and any(root.iterdir()) and not (root / POLICY_FILE).exists():
        raise ConfigError(f"{root}: exists and is not a policy directory; choose another --out")
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("calibrator", ANSWERABILITY, "cost_model"):  # a refit leaves no stale part
        if (root / sub).is_dir():
            shutil.rmtree(root / sub)
    files: dict[str, str] = {}
    policy.calibrator.save(root / "calibrator")
    files.update(_files(root, "calibrator"))
    answer: dict[str, Any]
    if policy.answerability is not None:
        save_artifact(policy.answerability, root / ANSWERABILITY, name=ANSWERABILITY,
                      metadata={"kind": "answerability", "estimator_params": policy.answerability
                                .get_params()})
        files.update(_files(root, ANSWERABILITY))
        answer = {"model": ANSWERABILITY, "kind": "TF-IDF + logistic regression"}
    else:
        answer = {"constant": policy.alpha_constant}
    ref = policy.cost_model_ref
    if policy.cost_model is None or (ref is not None and ref.get("source") == "shipped-default"):
        cost = {"source": "shipped-default", "sha256": _default_cost_sha()}
    elif isinstance(policy.cost_model, CostRegressor):
        save_model(policy.cost_model, root / "cost_model", metadata={
            "kind": policy.cost_model.kind, "ridge": policy.cost_model.ridge,
            "data_description": "refit for this policy"})
        files.update(_files(root, "cost_model"))
        cost = {"source": "file", "dir": "cost_model"}
    else:
        raise ConfigError("only a CostRegressor or the shipped default can be saved in a policy")
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "name": policy.name,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "c_r": policy.c_r, "signal": policy.signal, "confidence": policy.confidence,
        "calibrator": {"dir": "calibrator", "method": policy.calibrator.method_,
                       **({"signals": list(policy.calibrator.signals)}
                          if isinstance(policy.calibrator, MultiSignalCalibrator) else {})},
        "answerability": answer, "cost_model": cost, "files": files,
        **({"cost_scale": policy.cost_scale.to_data()} if policy.cost_scale else {}),
        **({"alpha_scale": policy.alpha_scale.to_data()} if policy.alpha_scale else {}),
        "versions": versions(), **(card or {}),
    }
    path = root / POLICY_FILE
    path.write_text(json.dumps(meta, indent=2, default=str) + "\n")
    policy.sha256, policy.path, policy.meta = sha256_file(path), root, meta
    from guard.policy.card import policy_card

    (root / "README.md").write_text(policy_card(meta, policy.label))
    return path


_DEFAULT_LOCK = threading.Lock()
_DEFAULT: list[Policy] = []


def load_shipped_default() -> Policy:
    """The shipped ``default`` policy, loaded (and checked) once per process: what a
    :class:`guard.Guard` given no policy decides with. Its parts are only read, never
    changed, so every such Guard shares them."""
    with _DEFAULT_LOCK:
        if not _DEFAULT:
            _DEFAULT.append(load_policy("default"))
        return _DEFAULT[0]


def _check_files(root: Path, meta: dict[str, Any], parts: list[Path], *, trust: bool
                 ) -> None:
    """Every file listed in ``meta["files"]`` inside ``root``; without ``trust`` each
    listed file's sha256 as listed and every file of the folders ``parts`` listed (nothing
    is read that the hash list does not name)."""
    files = meta.get("files") or {}
    if not isinstance(files, dict):
        raise ArtifactError(f"{root / POLICY_FILE}: 'files' must map paths to sha256 digests")
    listed = {inside(root, str(rel), "the listed file").resolve() for rel in files}
    for part in parts:
        if not part.resolve().is_relative_to(root.resolve()):
            raise ArtifactError(f"{part}: outside the policy folder {root}")
    if trust:
        return
    for part in parts:
        unlisted = [f for f in sorted(part.iterdir()) if f.is_file()
                    and f.resolve() not in listed] if part.is_dir() else []
        if unlisted:
            raise ArtifactError(f"{unlisted[0]}: not in {POLICY_FILE}'s hash list; refusing "
                                "to load a part the policy does not name")
    for rel, want in files.items():
        f = root / rel
        if not f.is_file():
            raise ArtifactError(f"{f}: missing (listed in {root / POLICY_FILE})")
        have = sha256_file(f)
        if have != want:
            raise ArtifactError(
                f"{f}: sha256 {have[:12]}... does not match {POLICY_FILE}'s {want[:12]}...; the "
                "policy was modified. Refusing to load it; pass "
                "trust=True / --trust only for a policy you made yourself.")


def load_policy(path_or_name: str | os.PathLike[str], *, trust: bool = False) -> Policy:
    """Load a policy directory or a shipped policy by name, verifying every part's sha256.

    Raises :class:`~cost_models.persistence.ArtifactError` for a modified or incomplete policy
    (unless ``trust``), :class:`ConfigError` for one that cannot be found or read.
    """
    root = resolve(path_or_name)
    raw = (root / POLICY_FILE).read_bytes()
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{root / POLICY_FILE}: unreadable ({exc.msg})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ConfigError(f"{root / POLICY_FILE}: not a utilityguard policy")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ConfigError(f"{root / POLICY_FILE}: format version {meta.get('format_version')}, "
                          f"this utilityguard reads {FORMAT_VERSION}")
    cost_ref = meta.get("cost_model") or {}
    if not isinstance(cost_ref, dict):
        raise ConfigError(f"{root / POLICY_FILE}: 'cost_model' must be an object")
    cost_dir = None if cost_ref.get("source") == "shipped-default" else \
        inside(root, str(cost_ref.get("dir", "cost_model")), "the cost model folder")
    parts = [root / "calibrator", root / ANSWERABILITY, *([cost_dir] if cost_dir else [])]
    _check_files(root, meta, parts, trust=trust)
    calibrator: Calibrator | MultiSignalCalibrator
    if (root / "calibrator" / MULTI_FILE).is_file():  # data, not code: nothing to trust
        calibrator = MultiSignalCalibrator.load(root / "calibrator")
    else:
        calibrator = Calibrator.load(root / "calibrator", trust=trust)
    answer = meta.get("answerability") or {}
    model = None
    if "model" in answer:
        obj = load_artifact(root / ANSWERABILITY, name=ANSWERABILITY, trust=trust,
                            rebuild=AnswerabilityModel.from_data)
        if not isinstance(obj, AnswerabilityModel):
            raise ArtifactError(f"{root / ANSWERABILITY}: not an AnswerabilityModel")
        model = obj
    cost: CostModel | None
    if cost_dir is None:
        have = _default_cost_sha()
        if have != cost_ref.get("sha256") and not trust:
            raise ArtifactError(
                f"{root}: fitted with the shipped cost model {str(cost_ref.get('sha256'))[:12]}"
                f"..., but this installation ships {have[:12]}...; refit the policy")
        cost = None
    else:
        cost = load_model(cost_dir, trust=trust)
    scale, ascale = meta.get("cost_scale"), meta.get("alpha_scale")
    return Policy(name=str(meta["name"]), c_r=float(meta["c_r"]), signal=str(meta["signal"]),
                  confidence=str(meta["confidence"]), calibrator=calibrator,
                  answerability=model, alpha_constant=answer.get("constant"),
                  cost_model=cost, cost_model_ref=cost_ref, meta=meta,
                  cost_scale=None if scale is None else CostScale.from_data(scale),
                  alpha_scale=None if ascale is None else AlphaScale.from_data(ascale),
                  sha256=hashlib.sha256(raw).hexdigest(), path=root)
