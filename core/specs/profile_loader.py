"""Load and validate user profiles in the Sensei YAML format (plus parley's `world:`/`expect:`).

Two entry points:
- `validate_profile(path) -> list[ProfileError]`: every problem of the file, in file order
  (empty when the profile is valid). This is what `parley profiles validate` prints.
- `load_profile(path) -> Profile`: the validated profile, or raises `InvalidProfile`, a
  ProfileError whose position is the first problem's and which carries all of them in
  `.errors` (its message lists each on its own line).

Everything that can be checked without running a conversation is checked on load, each problem
at file:line:col with its field path: YAML syntax here; the format itself (unknown keys with
did-you-mean, types and ranges, `{{var}}` placeholders, forward() chains) by the records that
declare it (parley.core.records.profile, read with a ProfileFileReading); personality files and
list functions (run once, here) by parley.core.specs.profile_validation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from parley.core.errors import ProfileError
from parley.core.records import PLACEHOLDER_RE, Profile
from parley.core.specs.input_files import read_input
from parley.core.specs.paths import ProfilePaths, search_for
from parley.core.specs.profile_validation import ProfileFileReading, read_personality
from parley.core.specs.yaml_reading import read_yaml

__all__ = [
    "FLAT_LAYOUT_HINT",
    "PLACEHOLDER_RE",
    "InvalidProfile",
    "check_profile_text",
    "load_profile",
    "parse_profile",
    "read_personality",
    "validate_profile",
]

# Sensei's layout before 2024: these keys stood at the top level, with no user:/chatbot: sections.
FLAT_LAYOUT_KEYS = ("role", "context", "ask_about", "goals", "language", "fallback", "is_starter", "output", "conversations")
FLAT_LAYOUT_HINT = (
    "this is Sensei's old flat layout (before 2024): role, context, language and ask_about (now goals) "
    "go under user:; fallback, is_starter and output under chatbot:; conversations becomes conversation: "
    "(one mapping of number, goal_style and interaction_style)"
)


class InvalidProfile(ProfileError):
    """A profile with one or more problems. Positioned at the first; `errors` holds them all."""

    def __init__(self, errors: Sequence[ProfileError]) -> None:
        if not errors:
            raise ValueError("InvalidProfile needs at least one error")
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.reason, file=first.file, line=first.line, column=first.column, field_path=first.field_path)

    def render(self) -> str:
        return "\n".join(error.render() for error in self.errors)


# -- public API ---------------------------------------------------------------------------------


def validate_profile(
    path: str | Path, *, personality_dirs: Sequence[Path] | None = None, paths: ProfilePaths | None = None
) -> list[ProfileError]:
    """Every problem of the profile at `path`, in file order; empty if it is valid."""
    _profile, errors = _check_file(path, _paths_for(path, personality_dirs, paths))
    return errors


def load_profile(path: str | Path, *, personality_dirs: Sequence[Path] | None = None, paths: ProfilePaths | None = None) -> Profile:
    """The validated profile at `path`; raises InvalidProfile (a ProfileError) listing every problem.

    Files the profile names are looked for as `parley.core.specs.paths` says: from the working
    directory, beside the profile and its parents, in `personality_dirs` (`--personalities`),
    then among the shipped personalities. `paths` replaces that search altogether.
    """
    profile, errors = _check_file(path, _paths_for(path, personality_dirs, paths))
    if errors or profile is None:
        raise InvalidProfile(errors)
    return profile


def parse_profile(
    text: str,
    *,
    source: str = "<profile>",
    base_dir: Path | None = None,
    personality_dirs: Sequence[Path] | None = None,
) -> Profile:
    """Like load_profile, from YAML text; relative files resolve against `base_dir`."""
    profile, errors = check_profile_text(text, source=source, base_dir=base_dir, personality_dirs=personality_dirs)
    if errors or profile is None:
        raise InvalidProfile(errors)
    return profile


def check_profile_text(
    text: str,
    *,
    source: str = "<profile>",
    base_dir: Path | None = None,
    personality_dirs: Sequence[Path] | None = None,
    paths: ProfilePaths | None = None,
) -> tuple[Profile | None, list[ProfileError]]:
    """(profile or None, every error) for YAML text. Files it names are searched from the
    working directory, then `base_dir` and its parents, then `personality_dirs` (unless `paths`
    says otherwise)."""
    try:
        data = read_yaml(text, source)
    except ProfileError as exc:
        return None, [exc]
    if paths is None:
        paths = ProfilePaths(base_dir, Path.cwd(), tuple(personality_dirs or ()))
    if data is None:
        return None, [ProfileError("the profile is empty; expected a mapping with test_name, user, ...", file=source, line=1, column=1)]
    errors: list[ProfileError] = []
    if isinstance(data, dict) and "user" not in data and any(key in data for key in FLAT_LAYOUT_KEYS):
        errors.append(ProfileError(FLAT_LAYOUT_HINT, file=source))
    reading = ProfileFileReading(source, data, paths)
    profile, problems = reading.validate(Profile)
    errors = sorted(errors + problems + reading.other_errors, key=lambda e: _error_order(e, source))
    if errors or profile is None:
        return None, errors
    return profile.model_copy(update={"warnings": reading.warnings, "notes": reading.notes}), []


# -- internals -----------------------------------------------------------------------------------


def _paths_for(path: str | Path, personality_dirs: Sequence[Path] | None, paths: ProfilePaths | None) -> ProfilePaths:
    if paths is not None:
        return paths.for_profile(Path(path).resolve().parent)
    return search_for(path, working_dir=Path.cwd(), personality_dirs=personality_dirs or ())


def _check_file(path: str | Path, paths: ProfilePaths) -> tuple[Profile | None, list[ProfileError]]:
    text, errors = read_input(path, "profile")
    if text is None:
        return None, errors
    return check_profile_text(text, source=str(path), paths=paths)


def _error_order(error: ProfileError, source: str) -> tuple[int, str, int, int]:
    # The profile's own errors first, in file order (a hint with no line before them); then
    # those inside personality files.
    return (0 if error.file == source else 1, error.file or "", error.line or 0, error.column or 0)
