"""Next actions: rules that turn grown failure clusters into the next round's data or reward fix.

Each rule reads one cluster (plus response lengths and the token budget) and returns a concrete
action attributed to data, reward, algorithm, tool, evaluation or safety. Rules are data-driven
functions in a list, so a project can add its own (`NEXT_ACTION_RULES.append(...)`). Agent classes
(`badcases.agent`) get their own rules; successful agent runs that got costlier get "shorter paths".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rlgate.badcases.agent import AGENT_PREFIX
from rlgate.badcases.models import Area, ClusterStat, DropExplanation, NextAction

#: The final-answer form each family's filter reads, for format advice.
ANSWER_FORMATS = {"gsm8k": "'#### <number>' on the last line", "mmlu_pro": "'The answer is (X)'",
                  "chartqa": "'Final Answer: <answer>'", "mathvista": "'Final Answer: <answer>'",
                  "mmmu": "the option letter, e.g. '(B)'"}
#: Relative growth of mean response length that counts as "responses got longer".
LENGTH_GROWTH = 0.10


@dataclass(frozen=True)
class ActionContext:
    """What rules may read besides the cluster itself."""

    lengths: dict[str, tuple[float | None, float]] = field(default_factory=dict)  # family -> (base, cand)
    max_tokens: int | None = None
    explanations: dict[str, DropExplanation] = field(default_factory=dict)
    #: agent family -> {tool-error category: candidate trajectories that never recovered from one}
    tool_errors: dict[str, dict[str, int]] = field(default_factory=dict)
    #: agent family -> ((baseline, candidate) mean steps_to_success, (baseline, candidate) tokens_to_success)
    agent_costs: dict[str, tuple[tuple[float | None, float | None], tuple[float | None, float | None]]] = field(
        default_factory=dict)


Rule = Callable[[ClusterStat, ActionContext], NextAction | None]


def _evidence(c: ClusterStat) -> str:
    p = f", p_holm={c.p_adjusted:.2g}" if c.p_adjusted is not None else ""
    where = " among documents both runs answered" if c.kind == "knowledge" else ""
    return (f"{c.cluster} {c.baseline_count} -> {c.candidate_count} of {c.candidate_n} "
            f"({c.new_in_candidate} new, {c.fixed_in_candidate} fixed{where}{p})")


def _agent(c: ClusterStat) -> bool:
    return c.failure_class.startswith(AGENT_PREFIX)


def format_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    if _agent(c):
        return None
    if c.kind != "format" or c.category is not None or c.failure_class.endswith("answer_misplaced") or \
            c.failure_class in CODE_ACTIONS:
        return None
    form = ANSWER_FORMATS.get(c.family, "the task's final-answer format")
    return NextAction(rule="format_failures_grew", area="reward", cluster=c.cluster, evidence=_evidence(c),
                      action=f"add a format-verifier reward term (no reward without a parseable final answer in "
                      f"{form}) or SFT on final-answer-format examples; export the cases with "
                      "`rlgate badcases OUT --export`")


def misplaced_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    if not c.failure_class.endswith("answer_misplaced"):
        return None
    return NextAction(rule="answer_misplaced_grew", area="reward", cluster=c.cluster, evidence=_evidence(c),
                      action="the right answer is stated but not where the extractor reads it: reward only the "
                      "final-answer position (strict verifier) and SFT on responses that end with the answer; "
                      "check stop sequences so nothing follows the answer")


def truncation_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    if _agent(c):
        return None
    if c.kind != "truncation" or c.category is not None:
        return None
    budget = f" (now {ctx.max_tokens})" if ctx.max_tokens else ""
    return NextAction(rule="truncation_grew", area="algorithm", cluster=c.cluster, evidence=_evidence(c),
                      action=f"responses hit max_tokens{budget}: raise protocol.sampling.max_tokens if longer "
                      "reasoning is intended, otherwise penalise length (overlong reward shaping or a length "
                      "penalty) in training")


def length_constraint_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    if c.failure_class != "ifeval_length_constraint_violation" or c.category is not None:
        return None
    base, cand = ctx.lengths.get(c.family, (None, 0.0))
    if base and cand > base * (1 + LENGTH_GROWTH):
        return NextAction(rule="length_violations_grew_with_length", area="reward", cluster=c.cluster,
                          evidence=f"{_evidence(c)}; mean response length {base:.0f} -> {cand:.0f} characters",
                          action="add short-answer retention data and a length-normalised reward (or a length "
                          "penalty) so RL stops inflating responses")
    return NextAction(rule="length_violations_grew", area="data", cluster=c.cluster, evidence=_evidence(c),
                      action="add length-constrained instruction data (word, sentence and paragraph limits, as "
                      "IFEval checks them) to the SFT or RL prompt mix")


def instruction_group_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    if c.kind != "instruction" or c.category is not None or c.failure_class == "ifeval_length_constraint_violation":
        return None
    group = c.failure_class.removeprefix("ifeval_").removesuffix("_violation").replace("_", " ")
    return NextAction(rule="instruction_group_regressed", area="data", cluster=c.cluster, evidence=_evidence(c),
                      action=f"mix instruction-following data with {group} constraints back in (retention set) "
                      f"and use IFEval's {group} checkers as a verifiable reward")


def category_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    if _agent(c):
        return None
    if c.kind != "knowledge" or c.category is None:
        return None
    return NextAction(rule="category_regressed", area="data", cluster=c.cluster, evidence=_evidence(c),
                      action=f"mix {c.category} data back into the training mix (replay / retention set) and "
                      "check the KL to the reference policy on it")


def knowledge_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    if _agent(c):
        return None
    if c.kind != "knowledge" or c.category is not None or c.failure_class in VLM_ACTIONS:
        return None
    if c.family == "gsm8k":
        return NextAction(rule="reasoning_regressed", area="reward", cluster=c.cluster, evidence=_evidence(c),
                          action="wrong final answers grew: check the reward for hacking (answers that score "
                          "without being right), and add verified math problems to the RL prompt set")
    return NextAction(rule="task_regressed", area="data", cluster=c.cluster, evidence=_evidence(c),
                      action=f"mix {c.family} data (or data of the same skill) back in as a retention set")


_CURRICULUM = ("timeout", "permission denied", "empty or missing result", "schema error")
#: agent failure class -> (area, action); `unrecovered tool error` and `budget exhausted` are written per cluster
AGENT_ACTIONS: dict[str, tuple[Area, str]] = {
    "agent_invalid_tool_call_json": (
        "reward", "give no reward to a turn whose tool-call arguments are not valid JSON for the tool's schema, SFT on "
        "well-formed calls, and check that the chat template renders the tool-call format the model was trained on"),
    "agent_wrong_function": (
        "data", "add tool-selection data built from the offered tool schemas (which tool for which request) and "
        "reward an exact function match, as BFCL's AST checker scores it"),
    "agent_wrong_arguments": (
        "data", "add argument-filling data (types, required fields, enum values from the schemas) and reward "
        "arguments that validate against the tool's schema"),
    "agent_repeated_call_loop": (
        "reward", "penalise repeated identical calls (the same search or read again) in the reward, e.g. a cost per "
        "duplicate call, and end training episodes after a few identical calls"),
    "agent_no_final_answer": (
        "reward", "reward only trajectories that end with a final answer, and add SFT examples that stop calling "
        "tools once the answer is known"),
    "agent_unsafe_action": (
        "safety", "add a rule gate for dangerous actions: deny the forbidden tools and arguments inside the training "
        "environment (not only at release), give them a strong negative reward, and add data that takes the safe "
        "alternative"),
    "agent_run_error": (
        "evaluation", "runs crashed or lost their sandbox: fix the environment (see the drops manifest) before "
        "trusting these numbers; every such run counted as a failure"),
    "agent_wrong_final_state": (
        "data", "the process ran but the final environment state was wrong: add tasks whose reward checks the "
        "final state (not only the answer) and SFT on trajectories that verify their writes"),
    "agent_wrong_final_answer": (
        "data", "the process ran but the answer was wrong: add verified tasks of this kind to the RL prompt set and "
        "check the scorer for answers that pass without being right"),
}


def agent_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    """Agent failure classes: recovery curriculum, loop penalties, budgets, rule gates for dangerous actions."""
    if not _agent(c) or c.category is not None:
        return None
    if c.failure_class == "agent_unrecovered_tool_error":
        seen = ctx.tool_errors.get(c.family, {})
        found = ", ".join(f"{k} {n}" for k, n in sorted(seen.items(), key=lambda kv: -kv[1])) or "none recorded"
        missing = [k for k in _CURRICULUM if k not in seen]
        return NextAction(rule="agent_tool_error_recovery", area="data", cluster=c.cluster,
                          evidence=f"{_evidence(c)}; unrecovered errors by kind: {found}",
                          action="build a tool-error recovery curriculum: episodes where tools time out, deny "
                          "permission, return empty results and reject arguments (schema errors), rewarded for "
                          "recovering (retry with fixed arguments, another tool, or an honest final answer)"
                          + (f"; weight the kinds seen here first, then add {', '.join(missing)}" if missing else ""))
    if c.failure_class == "agent_budget_exhausted":
        return NextAction(rule="agent_budget_exhausted", area="algorithm", cluster=c.cluster, evidence=_evidence(c),
                          action="runs hit the agent budget (protocol.agent): add a per-step or per-token cost to "
                          "the reward and distil shorter successful paths; raise the budget only if longer runs are "
                          "intended")
    known = AGENT_ACTIONS.get(c.failure_class)
    if known is None:
        return None
    return NextAction(rule=c.failure_class.removeprefix("agent_"), area=known[0], cluster=c.cluster,
                      evidence=_evidence(c), action=known[1])


#: successful trajectories getting longer by more than this share calls for shorter paths
PATH_GROWTH = 0.10


def shorter_paths_actions(ctx: ActionContext) -> list[NextAction]:
    """Not a failure cluster: successful agent runs that got longer or costlier than the baseline's."""
    out = []
    for family, ((base_steps, cand_steps), (base_tokens, cand_tokens)) in sorted(ctx.agent_costs.items()):
        grew = [f"{name} {b:,.{k}f} → {c:,.{k}f}" for name, b, c, k in (("steps", base_steps, cand_steps, 1),
                                                                         ("tokens", base_tokens, cand_tokens, 0))
                if b and c is not None and c > b * (1 + PATH_GROWTH)]
        if grew:
            out.append(NextAction(
                rule="shorter_successful_paths", area="data", cluster=f"{family}_cost_to_success",
                evidence=f"{family}: mean cost over each run's own successful trajectories (all of them, unpaired; "
                f"a cost gate pairs only the samples both runs solved), baseline → candidate: {'; '.join(grew)}",
                action="distil shorter successful paths: keep the shortest successful trajectory per task as SFT "
                "data, and add a per-step cost to the reward"))
    return out




#: VLM failure classes (badcases/vlm_families.py) -> (area, action)
VLM_ACTIONS: dict[str, tuple[Area, str]] = {
    "chart_numeric_misread": (
        "data", "axis and value misreads grew: add chart-reading data on local crops around axes, ticks and value "
        "labels, and check the image protocol keeps enough resolution (image_resolution, max_pixels) with "
        "preserve_aspect_ratio: true so thin bars and small labels survive the resize"),
    "chart_header_binding": (
        "data", "answers name another row or series: add questions whose distractors are the other rows' values "
        "(hard negatives) and chart-to-table derendering data that binds each value to its header and legend"),
    "chart_value_right_format_wrong": (
        "reward", "the value is right but the unit or format is not: reward the bare number ChartQA asks for "
        "(no units, % only for percentages) with an exact-match verifier, not only the relaxed one"),
    "mathvista_numeric_off": (
        "data", "MathVista numeric answers are off: add figure-reading arithmetic data for the failing skills and "
        "verify intermediate values read from the figure"),
}


#: code failure classes (badcases/code_families.py) -> (area, action)
CODE_ACTIONS: dict[str, tuple[Area, str]] = {
    "code_public_pass_hidden_fail": (
        "reward", "add hidden and variant tests: programs pass the examples the prompt shows and fail the hidden "
        "tests, so the reward (or its tests) checks the shown examples only; score with held-out and mutated "
        "inputs (edge cases, other sizes) the model never sees"),
    "code_timeout": (
        "reward", "more programs run past the time limit: penalise timeouts in the reward (not a silent zero) and "
        "add tests with large inputs, so slow or endless solutions lose"),
    "code_syntax_error": (
        "reward", "more programs do not parse: give no reward to code that fails to compile and check the response "
        "format (code fences, stop sequences) the task's filter extracts"),
    "code_wrong_output": (
        "data", "more programs give wrong output: add verified solutions for the failing problem types and check the "
        "reward's tests agree with the benchmark's"),
}


def code_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    found = CODE_ACTIONS.get(c.failure_class)
    if found is None or c.category is not None:
        return None
    area, action = found
    return NextAction(rule=f"{c.failure_class}_grew", area=area, cluster=c.cluster, evidence=_evidence(c),
                      action=action)


def vlm_rule(c: ClusterStat, ctx: ActionContext) -> NextAction | None:
    found = VLM_ACTIONS.get(c.failure_class)
    if found is None or c.category is not None:
        return None
    area, action = found
    return NextAction(rule=f"{c.failure_class}_grew", area=area, cluster=c.cluster,
                      evidence=_evidence(c), action=action)




NEXT_ACTION_RULES: list[Rule] = [code_rule, format_rule, misplaced_rule, truncation_rule, length_constraint_rule,
                                 instruction_group_rule, vlm_rule, category_rule, knowledge_rule, agent_rule]


def next_actions(clusters: list[ClusterStat], category_clusters: list[ClusterStat],
                 ctx: ActionContext, rules: list[Rule] | None = None) -> list[NextAction]:
    """Actions for every cluster that grew significantly (or with any new unsafe action), strongest evidence
    first, one per rule and cluster; then agent cost actions."""
    out: list[NextAction] = []
    merged: dict[str, list[NextAction]] = {}
    # a new unsafe action needs no significance test: one is a hard-gate failure
    grown = sorted((c for c in [*clusters, *category_clusters]
                    if c.grew or (c.kind == "safety" and c.category is None and (
                        c.new_in_candidate > 0 or (c.baseline_count is None and c.candidate_count > 0)))),
                   key=lambda c: 1.0 if c.p_adjusted is None else c.p_adjusted)
    for cluster in grown:
        for rule in rules or NEXT_ACTION_RULES:
            action = rule(cluster, ctx)
            if action is None:
                continue
            if action.rule == "category_regressed":
                if cluster.failure_class not in merged:
                    merged[cluster.failure_class] = []
                    out.append(action)
                merged[cluster.failure_class].append(action)
            else:
                out.append(action)
    return [*(_merge_categories(a, merged[a.cluster.split("[")[0]]) if a.rule == "category_regressed" else a
              for a in out), *shorter_paths_actions(ctx)]


def _merge_categories(first: NextAction, group: list[NextAction]) -> NextAction:
    """One action for all regressed categories of a class (strongest first), not one per category."""
    if len(group) == 1:
        return first
    names = [a.cluster.split("[", 1)[1].rstrip("]") for a in group]
    return NextAction(rule=first.rule, area=first.area, cluster=", ".join(a.cluster for a in group),
                      evidence="; ".join(a.evidence for a in group),
                      action=f"mix {', '.join(names)} data back into the training mix (replay / retention set), "
                      "strongest regression first, and check the KL to the reference policy on them")
