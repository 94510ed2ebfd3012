"""Profiles written for Sensei load as Sensei's own code loads them: what it accepts loads (with
a located warning where its rule surprises), what it rejects is a located error. Every profile
here is a small one of our own, written for the rule it checks."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from parley.core.specs.profile_loader import check_profile_text, load_profile
from parley.core.specs.shipped import SHIPPED_PERSONALITIES_DIR


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def check(tmp_path: Path, text: str, *, name: str = "p.yml", personality_dirs: list[Path] | None = None):
    """(profile or None, errors, warnings) for a profile written in tmp_path, paths shortened."""
    path = write(tmp_path, name, text)
    profile, errors = check_profile_text(
        path.read_text(encoding="utf-8"), source=name, base_dir=path.parent, personality_dirs=personality_dirs
    )
    return profile, [e.render() for e in errors], list(profile.warnings) if profile else []


BASE = """
test_name: shop
user:
  role: a customer
  context:
    - you are in a hurry
  goals:
    - where is my parcel
"""


# -- chatbot.output types ------------------------------------------------------------------------


def test_an_output_type_sensei_does_not_know_is_a_warning_and_extracted_as_str(tmp_path):
    profile, errors, warnings = check(
        tmp_path,
        BASE + "chatbot:\n  output:\n    - mail:\n        type: email\n        description: the shop's address\n",
    )
    assert errors == []
    assert profile.chatbot.outputs[0].type == "str"
    assert warnings == [
        "p.yml:11:15: chatbot.output[0].mail.type: output type 'email' is not one of int, float, money, str, "
        "time, date: extracted as str, as Sensei does"
    ]


# -- user.context ------------------------------------------------------------------------------------


def test_context_written_as_a_mapping_names_a_personality(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "personalities/shy.yml", "name: shy\ncontext:\n  - you speak softly\n")
    profile, errors, _ = check(
        tmp_path, "test_name: t\nuser:\n  role: r\n  context:\n    personality: personalities/shy.yml\n  goals: [hi]\n"
    )
    assert errors == []
    assert profile.user.context == ["you speak softly"]


def test_a_missing_personality_in_a_mapping_context_is_ignored_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    profile, errors, warnings = check(
        tmp_path, "test_name: t\nuser:\n  role: r\n  context:\n    personality: nobody-here.yml\n  goals: [hi]\n"
    )
    assert errors == [] and profile.user.context == []
    assert warnings[0].startswith("p.yml:5:18: user.context.personality: personality file 'nobody-here.yml' not found")
    assert warnings[0].endswith("ignored, as Sensei ignores it here")


def test_two_personalities_in_one_context_are_refused_as_sensei_refuses_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.yml", "context: [one]\n")
    write(tmp_path, "b.yml", "context: [two]\n")
    _, errors, _ = check(
        tmp_path,
        "test_name: t\nuser:\n  role: r\n  context:\n    - personality: a.yml\n    - personality: b.yml\n  goals: [hi]\n",
    )
    assert errors == ["p.yml:6:7: user.context[1]: Sensei takes one personality: entry per context; merge the files or keep one"]


# -- where the files a profile names are found -------------------------------------------------------

PERSONALITY_PROFILE = "test_name: t\nuser:\n  role: r\n  context:\n    - personality: personalities/formal-user.yml\n  goals: [hi]\n"


def test_the_profiles_own_folder_comes_first_then_the_working_directory(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    write(root, "personalities/formal-user.yml", "context: [from the working directory]\n")
    write(root, "examples/profiles/shop/personalities/formal-user.yml", "context: [beside the profile]\n")
    path = write(root, "examples/profiles/shop/p.yml", PERSONALITY_PROFILE)
    monkeypatch.chdir(root)
    profile = load_profile(path)
    assert profile.user.context == ["beside the profile"]  # what its author wrote beside it, wherever parley runs
    assert profile.notes == [
        f"{path}:5:20: user.context[0].personality: personality 'personalities/formal-user.yml' read from "
        f"{root / 'examples/profiles/shop/personalities/formal-user.yml'} (beside the profile)"
    ]
    (root / "examples/profiles/shop/personalities/formal-user.yml").unlink()
    assert load_profile(path).user.context == ["from the working directory"]  # as Sensei reads it, when nothing is beside it


def test_then_beside_the_profile_then_its_parents_up_to_the_working_directory(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    path = write(root, "examples/profiles/shop/p.yml", PERSONALITY_PROFILE)
    write(root, "examples/personalities/formal-user.yml", "context: [two folders up]\n")
    monkeypatch.chdir(root)
    assert load_profile(path).user.context == ["two folders up"]
    write(root, "examples/profiles/shop/personalities/formal-user.yml", "context: [beside]\n")
    assert load_profile(path).user.context == ["beside"]


def test_personalities_folders_come_after_the_profile_s_own_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "suite/p.yml", PERSONALITY_PROFILE)
    extra = tmp_path / "elsewhere"
    write(extra, "formal-user.yml", "context: [from --personalities]\n")
    assert load_profile(path, personality_dirs=[extra]).user.context == ["from --personalities"]


def test_the_file_the_profile_names_wins_over_parley_s_shipped_one(tmp_path, monkeypatch):
    assert (SHIPPED_PERSONALITIES_DIR / "formal-user.yml").is_file()  # the name clash this is about
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "personalities/formal-user.yml", "context: [the author's own formal user]\n")
    path = write(tmp_path, "suite/p.yml", PERSONALITY_PROFILE)
    profile = load_profile(path)
    assert profile.user.context == ["the author's own formal user"]
    assert profile.warnings == []


def test_the_shipped_personality_is_a_last_fallback_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "suite/p.yml", PERSONALITY_PROFILE)
    profile = load_profile(path)
    assert profile.user.personalities == [str(SHIPPED_PERSONALITIES_DIR / "formal-user.yml")]
    (warning,) = profile.warnings
    assert warning.startswith(f"{path}:5:20: user.context[0].personality: personality file 'personalities/formal-user.yml'")
    assert warning.endswith(f"using parley's shipped {SHIPPED_PERSONALITIES_DIR / 'formal-user.yml'}")


def test_list_function_files_and_their_file_arguments_come_from_the_working_directory(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    write(
        root,
        "list_functions/lists.py",
        """
        from pathlib import Path

        def lines(path, upper=False):
            words = Path(path).read_text().split()
            return [w.upper() for w in words] if upper else words
        """,
    )
    write(root, "list_functions/data/things.txt", "tea coffee\n")
    path = write(
        root,
        "examples/p.yml",
        """
        test_name: t
        user:
          role: r
          context: []
          goals:
            - "{{drink}}"
            - drink:
                function: forward()
                type: string
                data:
                  file: list_functions/lists.py
                  function_name: lines
                  args: [list_functions/data/things.txt, {upper: true}]
        """,
    )
    monkeypatch.chdir(root)
    assert load_profile(path).variable("drink").values == ["TEA", "COFFEE"]  # a mapping in args: keywords


def test_a_list_function_file_nowhere_to_be_found_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, errors, _ = check(
        tmp_path,
        """
        test_name: t
        user:
          role: r
          goals:
            - "{{n}}"
            - n: {function: forward(), type: int, data: {file: list_functions/numbers.py, function_name: numbers}}
        """,
    )
    assert errors == [
        f"p.yml:6:56: user.goals[1].n.data.file: list function file 'list_functions/numbers.py' not found (looked in {tmp_path})"
    ]


# -- llm -------------------------------------------------------------------------------------------------


def test_llm_format_text_is_accepted_and_speech_is_warned_about(tmp_path):
    profile, errors, warnings = check(tmp_path, BASE + "llm:\n  format:\n    type: text\n")
    assert errors == [] and warnings == [] and profile.llm.format.type == "text"
    profile, errors, warnings = check(tmp_path, BASE + "llm:\n  format:\n    type: speech\n    config: speech.yml\n")
    assert errors == [] and (profile.llm.format.type, profile.llm.format.config) == ("speech", "speech.yml")
    assert warnings == ["p.yml:10:11: llm.format.type: parley simulates text conversations only: the speech format is ignored"]
    _, errors, _ = check(tmp_path, BASE + "llm:\n  format:\n    type: video\n")
    assert errors == ["p.yml:10:11: llm.format.type: unknown format type 'video'; use one of text, speech"]


# -- layouts and keys ------------------------------------------------------------------------------------


def test_the_old_flat_layout_gets_one_hint_before_the_located_errors(tmp_path):
    _, errors, _ = check(tmp_path, "test_name: old\nrole: a customer\nask_about:\n  - hello\nfallback: sorry\n")
    assert errors[0].startswith("p.yml: this is Sensei's old flat layout (before 2024): role, context, language and ask_about")
    assert "p.yml:1:1: missing required key 'user'" in errors


def test_conversation_written_as_a_list_is_refused_with_what_to_write(tmp_path):
    _, errors, _ = check(tmp_path, BASE + "conversation:\n  - number: 2\n  - goal_style: {steps: 3}\n")
    assert errors == [
        "p.yml:8:1: conversation: expected a mapping, got a list: write number, goal_style and interaction_style "
        "as keys of one mapping, not as list items (Sensei's older layout; its current code rejects the list too)"
    ]


def test_keys_sensei_ignores_are_warnings_but_a_misspelt_missing_key_is_an_error(tmp_path):
    profile, errors, warnings = check(tmp_path, BASE + "description: for the docs\n")
    assert errors == [] and profile is not None
    assert warnings == ["p.yml:8:1: description: unknown key 'description' is ignored, as Sensei ignores it"]
    _, errors, _ = check(tmp_path, BASE + "conversations:\n  number: 2\n")
    assert errors == ["p.yml:8:1: conversations: unknown key 'conversations'; did you mean 'conversation'?"]


# -- variables -------------------------------------------------------------------------------------------


def variable(tmp_path: Path, definition: str, goal: str = "{{v}}"):
    return check(tmp_path, f'test_name: t\nuser:\n  role: r\n  goals:\n    - "{goal}"\n    - v: {definition}\n')


def test_type_str_is_refused_as_sensei_s_code_refuses_it(tmp_path):
    _, errors, _ = variable(tmp_path, "{function: forward(), type: str, data: [a]}")
    assert errors == ["p.yml:6:38: user.goals[1].v.type: unknown type 'str'; write string (Sensei's code takes int, float and string only)"]


def test_a_number_in_a_string_list_is_refused_with_a_hint(tmp_path):
    _, errors, _ = variable(tmp_path, "{function: forward(), type: string, data: [small, 10]}")
    assert errors == [
        "p.yml:6:60: user.goals[1].v.data[1]: expected text for type string, got 10 "
        "(quote it: Sensei's code takes text only in a string list)"
    ]


def test_a_blank_function_is_default(tmp_path):
    profile, errors, _ = variable(tmp_path, "{function: , type: string, data: [a, b]}")
    assert errors == [] and profile.variable("v").function.kind == "default"


def test_random_n_beyond_the_list_takes_every_item_with_a_warning(tmp_path):
    profile, errors, warnings = variable(tmp_path, "{function: random(5), type: string, data: [a, b]}")
    assert errors == [] and profile is not None
    assert warnings == [
        "p.yml:6:21: user.goals[1].v.function: random(5) picks 5 items but 'v' has only 2: every conversation "
        "gets all 2, in a random order, as in Sensei"
    ]


def test_an_item_listed_twice_counts_twice(tmp_path):
    profile, errors, warnings = variable(tmp_path, "{function: forward(), type: string, data: [a, b, a]}")
    assert errors == [] and profile.variable("v").values == ["a", "b", "a"]
    assert warnings == ["p.yml:6:59: user.goals[1].v.data[2]: 'a' is listed twice: it counts twice, as in Sensei"]


def test_placeholders_without_variables_and_unused_variables_are_warnings(tmp_path):
    profile, errors, warnings = variable(tmp_path, "{function: forward(), type: string, data: [a]}", goal="{{w}}")
    assert errors == [] and profile.user.goals == ["{{w}}"]
    assert warnings == [
        "p.yml:5:7: user.goals[0]: goal uses {{w}} but no variable 'w' is defined; defined: v; it stays as written, as in Sensei",
        "p.yml:6:7: user.goals[1].v: variable 'v' is defined but no goal uses {{v}}",
    ]


@pytest.mark.parametrize("style", ["steps", "random steps"])
def test_steps_stop_below_twenty_as_in_sensei(tmp_path, style):
    _, errors, _ = check(tmp_path, BASE + f"conversation:\n  goal_style:\n    {style}: 20\n")
    assert len(errors) == 1 and errors[0].endswith("must be between 1 and 19, got 20")
