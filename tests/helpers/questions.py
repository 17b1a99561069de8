"""What the questions' property tests draw: paths into an agent run's
state and conditions over them (each way of answering is held to the same)."""

from __future__ import annotations

from hypothesis import strategies as st

PATHS = [
    "phase",
    "attempt",
    "spent.tokens",
    "spent.tool_calls",
    "calls.call-000001.status",
    "calls.call-000002",
    "calls.call-000003.ok",
    "checks[0].passed",
    "checks[1]",
    "checks.0.passed",  # the dotted form of a list index: as checks[0].passed
    "checks.1",
    "calls",
    "checks",
    "spent",
]
ATOMS = st.one_of(
    st.sampled_from(
        [
            'phase == "retrying"',
            'phase != "running"',
            'phase == "succeeded"',
            "attempt >= 2",
            "spent.tokens > 3000",
            "spent.tool_calls == 2",
            'calls.call-000001.status == "finished"',
            'calls.call-000002.status == "denied"',
            "calls.call-000003 exists",
            "checks[0].passed == false",
            "checks[1].passed == true",
            "checks.0.passed == false",
            "checks.1 exists",
            "len(checks.0) == 3",
            "len(calls) > 3",
            "len(checks) == 1",
            "spent.cost < 0.01",
        ]
    ),
)


@st.composite
def conditions(draw: st.DrawFn) -> str:
    left = draw(ATOMS)
    how = draw(st.sampled_from(["", "and", "or", "not"]))
    if how == "":
        return left
    if how == "not":
        return f"not ({left})"
    return f"{left} {how} {draw(ATOMS)}"
