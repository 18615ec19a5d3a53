"""When does an answer count as supported by its context? A rule that fits the scores logged.

Faithfulness logged as 0/1 verdicts is supported at 1. Graded scores (a share of claims, a mean
of ratings) rarely reach exactly 1, so "supported" there starts at GRADED_SUPPORTED unless
``--supported-threshold`` says otherwise. Either way the report says which rule it used, and
whether the rule, more than correctness, decides "correct and supported".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formatting import fmt_share

BOOLEAN_SUPPORTED = 1.0  # 0/1 faithfulness verdicts: supported means 1
GRADED_SUPPORTED = 0.8  # graded faithfulness: supported from here, unless the option says
DOMINATES_ABOVE = 0.5  # the rule decides when it rejects more than this share of correct answers


@dataclass(frozen=True)
class SupportedRule:
    threshold: float
    # "--supported-threshold", "0/1 scores", "graded scores", "not logged", or "logged by A only"
    # (B): not applied, a rule one run escapes would make a difference that is only a column
    source: str
    unsupported: dict[str, float | None]  # run -> share of its correct answers below threshold
    dominates: bool  # some run loses more than DOMINATES_ABOVE of its correct answers to it

    @property
    def text(self) -> str:
        if self.source == "not logged":
            return "Faithfulness is not logged: a good answer is a correct one."
        if self.source.startswith("logged by"):
            return f"Faithfulness is {self.source}: a good answer is a correct one in both runs."
        why = {
            "--supported-threshold": "set by --supported-threshold",
            "0/1 scores": "faithfulness is logged as 0/1",
            "graded scores": "the default for graded faithfulness; --supported-threshold sets it",
        }[self.source]
        rule = f"An answer counts as supported when faithfulness \u2265 {self.threshold:g} ({why})"
        shares = {r: s for r, s in self.unsupported.items() if s is not None}
        if not shares:
            return rule + "."
        below = " and ".join(f"{fmt_share(s)} of {r.upper()}'s" for r, s in shares.items())
        text = f"{rule}; {below} correct answers fall below it"
        if self.dominates:
            return (
                text + ", so the rule, more than correctness, decides every 'correct and "
                "supported' result: read correct alone beside it."
            )
        return text + "."


def supported_rule(
    faithfulness: dict[str, np.ndarray], correct: dict[str, np.ndarray], given: float | None
) -> SupportedRule:
    """The threshold for these scores (``given`` when set) and how much it decides.

    ``faithfulness`` and ``correct``: per run ("a", "b"), one float per question, NaN where not
    logged (correct as 0/1).
    """
    scores = np.concatenate(list(faithfulness.values()))
    scores = scores[~np.isnan(scores)]
    if not scores.size:  # nothing to fit nor to apply a threshold to
        threshold, source = BOOLEAN_SUPPORTED if given is None else given, "not logged"
    elif given is not None:
        threshold, source = given, "--supported-threshold"
    elif np.isin(scores, (0.0, 1.0)).all():
        threshold, source = BOOLEAN_SUPPORTED, "0/1 scores"
    else:
        threshold, source = GRADED_SUPPORTED, "graded scores"
    unsupported: dict[str, float | None] = dict.fromkeys(faithfulness)
    logging = [run for run, faith in faithfulness.items() if (~np.isnan(faith)).any()]
    if scores.size and len(logging) < len(faithfulness):  # as good_answers: correct alone
        return SupportedRule(threshold, f"logged by {logging[0].upper()} only", unsupported, False)
    for run, faith in faithfulness.items():
        judged = (correct[run] == 1) & ~np.isnan(faith)
        unsupported[run] = float((faith[judged] < threshold).mean()) if judged.any() else None
    dominates = any(s is not None and s > DOMINATES_ABOVE for s in unsupported.values())
    return SupportedRule(threshold, source, unsupported, dominates)
