"""Property-based tests: any valid profile expands without error, deterministically per seed,
and all_combinations walks every combination of the largest forward() chain, as Sensei counts."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from property_settings import examples
from ruamel.yaml import YAML

from parley.core.records.profile import STYLE_NAMES
from parley.core.specs.expansion import expand
from parley.core.specs.profile_loader import parse_profile

PROPERTY_SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass
class GeneratedVariable:
    name: str
    definition: dict[str, Any]
    size: int  # how many values its data gives
    forward: bool
    nests: str | None = None


WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@st.composite
def variable_data(draw: st.DrawFn) -> tuple[str, Any, int]:
    """(type, data, number of distinct values)."""
    kind = draw(st.sampled_from(["string", "int", "float", "int_range", "float_range", "linspace"]))
    if kind == "string":
        values = draw(st.lists(WORDS, min_size=1, max_size=5, unique=True))
        return kind, values, len(values)
    if kind == "int":
        values = draw(st.lists(st.integers(-50, 50), min_size=1, max_size=5, unique=True))
        return "int", values, len(values)
    if kind == "float":
        quarters = draw(st.lists(st.integers(-40, 40), min_size=1, max_size=5, unique=True))
        return "float", [q / 4 for q in quarters], len(quarters)
    if kind == "int_range":
        low = draw(st.integers(-10, 10))
        high = draw(st.integers(low, low + 12))
        step = draw(st.integers(1, 4))
        return "int", {"min": low, "max": high, "step": step}, len(range(low, high, step)) + 1  # arange, then max
    if kind == "float_range":
        low = draw(st.integers(0, 8)) / 2
        count = draw(st.integers(1, 6))
        step = draw(st.sampled_from([0.25, 0.5, 1.0]))
        return "float", {"min": low, "max": low + step * (count - 1), "step": step}, count
    low = draw(st.integers(0, 8))
    points = draw(st.integers(2, 6))
    return "float", {"min": low, "max": low + 5, "linspace": points}, points


@st.composite
def profiles(draw: st.DrawFn, number: Any = None) -> tuple[str, list[GeneratedVariable]]:
    """YAML text of a valid profile, and what its variables are. With `number` given (counted
    from combinations), the first variable nests the second: there is always a chain."""
    chained = number is not None
    count = draw(st.integers(2 if chained else 0, 4))
    forward_flags = [draw(st.booleans()) for _ in range(count)]
    if chained:
        forward_flags[0] = forward_flags[1] = True
    variables: list[GeneratedVariable] = []
    for index in range(count):
        var_type, data, size = draw(variable_data())
        name = f"v{index}"
        if forward_flags[index]:
            later = [j for j in range(index + 1, count) if forward_flags[j]]
            nests = draw(st.sampled_from([None, *later])) if later else None
            if chained and index == 0:
                nests = 1
            function = f"forward(v{nests})" if nests is not None else "forward()"
        else:
            function = draw(
                st.sampled_from(["default()", "random()", "random(rand)", "another()", f"random({draw(st.integers(1, size))})"])
            )
        definition = {name: {"function": function, "type": var_type, "data": data}}
        nested = f"v{nests}" if forward_flags[index] and nests is not None else None
        variables.append(GeneratedVariable(name, definition, size, forward_flags[index], nested))

    goals: list[Any] = ["hello"]
    if variables:
        goals.append("I want " + " and ".join("{{" + v.name + "}}" for v in variables))
    goals += [v.definition for v in variables]
    style_choices = st.sampled_from([s for s in STYLE_NAMES if s != "change language"])
    styles: list[Any] = draw(st.lists(style_choices, max_size=2))
    if draw(st.booleans()):
        choices: list[Any] = draw(st.lists(style_choices, min_size=1, max_size=3))
        if draw(st.booleans()):
            choices.append({"change language": ["italian", "german"]})
        styles.insert(draw(st.integers(0, len(styles))), {"random": choices})
    goal_style = draw(
        st.sampled_from(
            [
                {"steps": 3},
                {"random steps": 19},
                "all_answered",
                {"all_answered": {"export": True, "limit": 5}},
                "default",
            ]
        )
    )
    if number is None:
        has_chain = any(v.nests for v in variables)
        number = draw(
            st.one_of(st.integers(1, 12), st.just("all_combinations"), st.integers(50, 100).map(lambda p: f"sample({p / 100})"))
            if has_chain
            else st.integers(1, 12)
        )
        if isinstance(number, str) and number.startswith("sample("):  # valid only if it plans one at least
            total = math.prod(v.size for v in largest_chain(variables))
            if round(float(number[7:-1]) * total) < 1:
                number = "all_combinations"
    document = {
        "test_name": "generated",
        "user": {"role": "a customer", "goals": goals},
        "conversation": {"number": number, "goal_style": goal_style, "interaction_style": styles or ["default"]},
    }
    buffer = io.StringIO()
    YAML(typ="safe", pure=True).dump(document, buffer)
    return buffer.getvalue(), variables


def chains(variables: list[GeneratedVariable]) -> list[list[GeneratedVariable]]:
    """Sensei's chains: from each forward(x) variable nothing nests, following the links."""
    by_name = {v.name: v for v in variables if v.forward}
    nested = {v.nests for v in by_name.values()}
    found = []
    for v in by_name.values():
        if v.nests and v.name not in nested:
            chain = [v]
            while chain[-1].nests:
                chain.append(by_name[chain[-1].nests])
            found.append(chain)
    return found


def largest_chain(variables: list[GeneratedVariable]) -> list[GeneratedVariable]:
    return max(chains(variables), key=lambda c: math.prod(v.size for v in c))


@PROPERTY_SETTINGS
@given(generated=profiles(), seed=st.integers(0, 2**32))
def test_valid_profiles_always_expand_deterministically(generated: tuple[str, list[GeneratedVariable]], seed: int) -> None:
    text, variables = generated
    profile = parse_profile(text, source="generated.yaml")
    specs = expand(profile, seed=seed)
    assert specs, "at least one conversation"
    assert specs == expand(profile, seed=seed)
    assert len({s.spec_id for s in specs}) == len(specs)
    for spec in specs:
        assert all("{{" not in goal for goal in spec.goals)
        assert set(spec.variables) == {v.name for v in variables}
        assert spec.interaction_styles
        if spec.goal_style.kind == "random_steps":
            assert 1 <= (spec.goal_style.steps or 0) <= 19


@PROPERTY_SETTINGS
@given(generated=profiles(number="all_combinations"))
def test_all_combinations_walks_the_largest_chain(generated: tuple[str, list[GeneratedVariable]]) -> None:
    text, variables = generated
    specs = expand(parse_profile(text, source="generated.yaml"))
    chain = largest_chain(variables)
    assert len(specs) == math.prod(v.size for v in chain)
    combos = {tuple(s.variables[v.name] for v in chain) for s in specs}
    assert len(combos) == len(specs)  # the chain's values differ: every combination exactly once


@PROPERTY_SETTINGS
@given(generated=profiles(number="sample(0.3)"), seed=st.integers(0, 1000))
def test_sample_takes_a_rounded_fraction_of_the_combinations(generated: tuple[str, list[GeneratedVariable]], seed: int) -> None:
    text, variables = generated
    total = math.prod(v.size for v in largest_chain(variables))
    assume(round(0.3 * total) >= 1)
    specs = expand(parse_profile(text, source="generated.yaml"), seed=seed)
    assert len(specs) == round(0.3 * total)  # Python's round, as Sensei
    assert [s.variables for s in specs] == [s.variables for s in expand(parse_profile(text, source="generated.yaml"), seed=seed)]
