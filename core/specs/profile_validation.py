"""What only a reader of profile files can check: personality files, list functions, the date
generator's "today", and the checks across sections that the records cannot make alone.

The profile format itself is declared by the records (parley.core.records.profile); they read a
profile's YAML with a `ProfileFileReading` as context, which finds the files a profile names
(as parley.core.specs.paths says), runs its list functions, and locates every problem.
"""

from __future__ import annotations

import datetime
import math
from pathlib import Path
from typing import Any

from parley.core.errors import ProfileError
from parley.core.records import (
    MAX_CONVERSATIONS,
    ConversationNumber,
    Personality,
    ProfileReading,
    Scalar,
    Variable,
    VariableType,
    describe,
    did_you_mean,
    fail,
    is_int,
    is_number,
    plain_value,
)
from parley.core.specs.combinations import combination_count, forward_plan, sample_size
from parley.core.specs.date_data import date_values
from parley.core.specs.paths import ProfilePaths
from parley.core.specs.variables import list_function_values
from parley.core.specs.yaml_reading import read_yaml
from parley.core.specs.yaml_validation import YamlReading

__all__ = [
    "MAX_CONVERSATIONS",
    "ProfileFileReading",
    "describe",
    "did_you_mean",
    "is_int",
    "is_number",
    "plain_value",
    "read_personality",
]

# The order API's own id pattern (its schema owns it), compiled.


class ProfileFileReading(YamlReading, ProfileReading):
    """The reading of one profile file: files it names are looked for along `paths`; problems
    found inside them (a broken personality file) are kept in `other_errors`."""

    def __init__(self, file: str, data: Any, paths: ProfilePaths) -> None:
        super().__init__(file, data)
        self.paths = paths
        self.today = datetime.date.today()
        self.other_errors: list[ProfileError] = []

    def personality(self, entry: dict[Any, Any], written: str, *, missing_ok: bool) -> tuple[list[str], str] | None:
        found = self.paths.find(written, personality=True)
        if found is None:
            places = ", ".join(self.paths.places(personality=True)) or "nowhere"
            if missing_ok:
                self.warn(
                    entry,
                    ("personality",),
                    f"personality file '{written}' not found (looked in {places}); ignored, as Sensei ignores it here",
                )
                return None
            fail(f"personality file '{written}' not found (looked in {places})", at=("personality",))
        lines, errors = read_personality(found.path)
        if errors:
            self.other_errors.extend(errors)
            fail(f"personality file '{written}' is invalid (see {found.path})", at=("personality",))
        if found.where == "shipped":
            self.warn(
                entry,
                ("personality",),
                f"personality file '{written}' is not in the working directory, beside the profile or in a "
                f"--personalities folder: using parley's shipped {found.path}",
            )
        else:
            self.note(entry, ("personality",), f"personality '{written}' read from {found.path} ({found.where})")
        return lines, str(found.path)

    def list_function(self, data: dict[Any, Any], var_type: VariableType) -> list[Scalar]:
        return list_function_values(self, data, var_type, self.paths)

    def dates(self, data: Any, *, seed: str) -> list[str]:
        return date_values(self, data, today=self.today, seed=seed)

    def count(self, section: dict[Any, Any], number: ConversationNumber, variables: list[Variable]) -> None:
        """Sensei's count of the variables' combinations (see parley.core.specs.combinations),
        with a warning where that count surprises."""
        written = "all_combinations" if number.kind == "all_combinations" else str(section["number"]).strip()
        fraction = 1.0 if number.fraction is None else number.fraction
        total = combination_count(variables)
        if total is None:
            return  # any() items still to generate: counted after they are
        at = ("number",)
        if total == 0:
            fail(
                f"{written} counts the combinations of nested forward() variables (a forward(x) naming "
                "another forward() variable) and this profile has none, so Sensei runs 0 conversations; "
                "nest one forward() in another, or give a number",
                at=at,
            )
        wanted = fraction * total
        count = sample_size(fraction, total)
        if count == 0:
            fail(
                f"{written} of {total} combinations is {wanted:g}, which rounds to 0 conversations "
                "(Sensei rounds with Python's round); raise the fraction or give a number",
                at=at,
            )
        if count > MAX_CONVERSATIONS:
            fail(f"{written} gives {count} conversations; the limit is {MAX_CONVERSATIONS}", at=at)
        if written != "all_combinations" and wanted != count and wanted - math.floor(wanted) == 0.5:
            self.warn(section, at, f"{written} of {total} combinations is {wanted:g}, which Python's round (as Sensei) makes {count}")
        plan = forward_plan(variables)
        if plan.independent:
            names = ", ".join(f"'{v.name}'" for v in plan.independent)
            every = math.prod(len(v.values) for chain in plan.chains for v in chain) * math.prod(len(v.values) for v in plan.independent)
            self.warn(
                section,
                at,
                f"{names}: forward() that no other variable nests; as in Sensei it steps through its values, "
                f"one per conversation, and is left out of the count ({total}, not {every})",
            )


def read_personality(path: Path) -> tuple[list[str], list[ProfileError]]:
    """The context lines of a personality file (`name:` optional, `context:` a list of text)."""
    source = str(path)
    try:
        data = read_yaml(path.read_text(encoding="utf-8"), source)
    except ProfileError as exc:
        return [], [exc]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [ProfileError(f"cannot read personality file: {exc}", file=source)]
    personality, errors = YamlReading(source, data).validate(Personality)
    return (personality.context if personality is not None else []), errors
