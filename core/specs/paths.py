"""Where the files a profile names are looked for: personalities, list functions and their args.

Sensei opens these paths as written, that is from the working directory it runs in (its
repository root). parley looks, in this order, and takes the first file that exists:
1. the profile's own folder, then each parent folder up to the working directory (a profile
   outside the working directory: up to the file system's root): what the profile's author
   wrote beside it wins, wherever parley is run from;
2. the working directory (as Sensei does);
3. the folders given with `--personalities DIR` (as written there, and by file name);
4. for personalities only, parley's shipped personalities, by file name: a last fallback, and a
   warning says so, since that file is parley's and not the one the profile's author had.
A file the profile names always wins over a shipped one of the same name. `.yml`/`.yaml` may be
left off a personality's name.

The batch service loads profiles with `working_dir=None`: no working directory and no parent
folders are searched (a profile sent inline must not reach files around the service).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from parley.core.specs.shipped import SHIPPED_PERSONALITIES_DIR

FoundWhere = Literal["working directory", "beside the profile", "parent folder", "--personalities", "shipped"]


@dataclass(frozen=True)
class Found:
    """A file found for a path written in a profile, and where the search found it."""

    path: Path
    where: FoundWhere


@dataclass(frozen=True)
class ProfilePaths:
    """The folders a profile's relative paths are resolved against (see the module doc)."""

    profile_dir: Path | None = None
    working_dir: Path | None = None
    personality_dirs: tuple[Path, ...] = ()
    shipped_personalities: Path | None = field(default=SHIPPED_PERSONALITIES_DIR)

    def for_profile(self, profile_dir: Path | None) -> ProfilePaths:
        """The same search for a profile in `profile_dir`."""
        return ProfilePaths(profile_dir, self.working_dir, self.personality_dirs, self.shipped_personalities)

    def _folders(self) -> list[tuple[Path, FoundWhere]]:
        folders: list[tuple[Path, FoundWhere]] = []
        if self.profile_dir is not None:
            folders.append((self.profile_dir, "beside the profile"))
            if self.working_dir is not None:
                here, stop = self.profile_dir.resolve(), self.working_dir.resolve()
                inside = here == stop or stop in here.parents
                for parent in () if here == stop else here.parents:
                    if inside and parent == stop:
                        break
                    folders.append((parent, "parent folder"))
        if self.working_dir is not None and all(folder.resolve() != self.working_dir.resolve() for folder, _ in folders):
            folders.append((self.working_dir, "working directory"))
        return folders

    def places(self, *, personality: bool = False) -> list[str]:
        """The folders searched, for an error message."""
        shown = [str(folder) for folder, _ in self._folders()]
        shown += [str(d) for d in self.personality_dirs]
        if personality and self.shipped_personalities is not None:
            shown.append(f"{self.shipped_personalities} (parley's shipped personalities)")
        return list(dict.fromkeys(shown))

    def find(self, written: str, *, personality: bool = False) -> Found | None:
        """The file `written` names, or None. Absolute paths are taken as they are."""
        path = Path(written.strip()).expanduser()
        candidates: list[tuple[Path, FoundWhere]] = []
        if path.is_absolute():
            candidates.append((path, "working directory"))
        else:
            candidates += [(folder / path, where) for folder, where in self._folders()]
            for folder in self.personality_dirs:
                candidates += [(folder / path, "--personalities"), (folder / path.name, "--personalities")]
            if personality and self.shipped_personalities is not None:
                candidates.append((self.shipped_personalities / path.name, "shipped"))
        for candidate, where in candidates:
            options = [candidate]
            if personality and not candidate.suffix:
                options += [candidate.with_suffix(".yml"), candidate.with_suffix(".yaml")]
            for option in options:
                if option.is_file():
                    return Found(option, where)
        return None


def search_for(profile_path: str | Path | None, *, working_dir: Path | None, personality_dirs: Sequence[Path] = ()) -> ProfilePaths:
    """The search for the profile at `profile_path` (None: a profile given as text)."""
    profile_dir = Path(profile_path).resolve().parent if profile_path is not None else None
    return ProfilePaths(profile_dir, working_dir, tuple(Path(d) for d in personality_dirs))
