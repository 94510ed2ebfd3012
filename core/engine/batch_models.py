"""The models of a batch's three roles, built once and shared by every conversation.

`BatchModels` turns the role names of `BatchOptions.models` into the bot, a fresh user
simulator per conversation, and the judge:
- every LLM call reports to the batch's `AdaptiveLimit`: its retries (429s shrink the limit)
  through the provider's `on_retry`, its successes through `ObservedModel`;
- with `cache`, LLM replies go through `CachedModel` (parley.core.store.reply_cache); offline models never do;
- the judge is bounded by its own timeout (`BoundedJudge`): a hung judge becomes a judge
  error, never a score and never a stuck batch;
- `check_keys` resolves every endpoint a batch will use before anything runs, so a missing
  API key is one clear ConfigError up front; it also checks what the bot needs besides a key
  (a prompt bot's placeholders against every spec, an http: connector's header variables);
  `preflight` then asks each endpoint once (parley.core.engine.reachability): is it there, is
  the key accepted, which models and context lengths does it report;
- the bot may be a connector, a prompt bot or a Python bot (parley.core.bots.bot_names):
  `bot_spec` says which, and whether it uses parley's World; a bot built elsewhere (a callable
  handed to the Python API) may be given whole. A Python bot's module is imported by
  `check_keys`, once, before anything runs.
- each LLM role gets its context length (`context_tokens`: the role's option, else what its
  endpoint reported before launch, else the default), to which the prompts parley builds for
  it are condensed (parley.core.prompts).
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from parley.core.bots import Bot, BotSpec, build_bot, declared_fallback, parse_bot_spec
from parley.core.engine.reachability import PreflightReport, Target, run_preflight
from parley.core.errors import ConfigError, ParleyError, PythonCodeRefused
from parley.core.evaluation import (
    CalibrationPolicy,
    CriteriaJudge,
    CriteriaJudgement,
    Criterion,
    Judge,
    Jury,
    LLMJudge,
    OfflineJudge,
    judge_generation,
    judge_prompt_version,
    jurors_of,
    policy_for,
)
from parley.core.models import OFFLINE, ChatModel, ChatModelBase, RetryEvent, get_model, parse_model_name, rate_limit_deadline
from parley.core.prompts import context_tokens
from parley.core.records import (
    BatchOptions,
    CheckLimits,
    CheckResult,
    Conversation,
    ConversationSpec,
    GenerateConfig,
    JudgeKey,
    JudgeResult,
    ModelPrice,
    ModelReply,
    ModelRequest,
    RoleModels,
)
from parley.core.store import CachedModel, Store, calibrations_for
from parley.core.users import PROFILE_MODEL, REPLAY_USER, CustomerFacts, UserSimulator, make_user_simulator
from parley.core.world import WorldDefinition

DEFAULT_JUDGE_TIMEOUT_S = 90.0


def public_endpoint(base_url: str) -> str:
    """A base URL as a calibration records it: scheme, host, port and path, without user-info or
    query (where credentials may be)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


class ObservedModel(ChatModelBase):
    """Tells `on_success` about each call that went through (the adaptive limit grows on them)."""

    def __init__(self, inner: ChatModel, on_success: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self._on_success = on_success

    def __repr__(self) -> str:
        return f"ObservedModel({self.inner!r})"

    async def reply_to(self, request: ModelRequest) -> ModelReply:
        reply = await self.inner.generate(request.messages, request.tools, request.config)
        self._on_success()
        return reply

    def stream_reply(self, request: ModelRequest) -> _ObservedStream:
        return _ObservedStream(self.inner.stream(request.messages, request.tools, request.config), self._on_success)


class _ObservedStream:
    def __init__(self, inner: Any, on_success: Any) -> None:
        self._inner = inner
        self._on_success = on_success
        self.reply: ModelReply | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._run()

    async def _run(self) -> AsyncIterator[str]:
        async for delta in self._inner:
            yield delta
        self.reply = self._inner.reply
        self._on_success()


class BoundedJudge:
    """A judge with a time limit of its own: past it, a judge error (no score). It carries the
    batch's `calibration` policy, which evaluation marks the judge's verdicts with."""

    def __init__(self, inner: Judge, timeout_s: float, *, calibration: CalibrationPolicy | None = None) -> None:
        self.inner = inner
        self.timeout_s = timeout_s
        self.name = str(getattr(inner, "name", type(inner).__name__))
        self.calibration = calibration

    async def judge(self, conversation: Conversation, spec: ConversationSpec, checks: Sequence[CheckResult]) -> JudgeResult:
        try:
            with rate_limit_deadline(self.timeout_s):  # a rate-limited judge waits, up to its own limit
                async with asyncio.timeout(self.timeout_s):
                    return await self.inner.judge(conversation, spec, checks)
        except TimeoutError:
            return JudgeResult(judge=self.name, error=f"the judge gave no answer within {self.timeout_s:g} s")

    @property
    def criteria_judge(self) -> BoundedCriteriaJudge | None:
        """The inner judge's criteria judge under the same time limit (None: it has none)."""
        inner = getattr(self.inner, "criteria_judge", None)
        return BoundedCriteriaJudge(inner, self.timeout_s) if inner is not None else None


class BoundedCriteriaJudge:
    """A criteria judge with a time limit of its own: past it, a judge error on every criterion."""

    def __init__(self, inner: CriteriaJudge, timeout_s: float) -> None:
        self.inner = inner
        self.timeout_s = timeout_s
        self.name = str(getattr(inner, "name", type(inner).__name__))

    async def judge_criteria(self, conversation: Conversation, spec: ConversationSpec, criteria: Sequence[Criterion]) -> CriteriaJudgement:
        try:
            with rate_limit_deadline(self.timeout_s):
                async with asyncio.timeout(self.timeout_s):
                    return await self.inner.judge_criteria(conversation, spec, criteria)
        except TimeoutError:
            return CriteriaJudgement(judge=self.name, error=f"the judge gave no answer within {self.timeout_s:g} s")


class BatchModels:
    """The bot, user simulators and judge of one batch (see the module doc)."""

    def __init__(
        self,
        models: RoleModels,
        *,
        store: Store | None = None,
        cache: bool = False,
        judge_timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S,
        env: Any = None,
        bot: Bot | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
        check_limits: CheckLimits | None = None,
        python_refusal: Callable[[str], str] | None = None,
    ) -> None:
        """`bot`: the bot under test itself, when it is not built from its name (`models.bot`
        still names it, for the record); `prices`: the batch's `--price`s, by model name;
        `check_limits`: the batch's `--limit`s, which the judging applies; `python_refusal`: why
        a check written in Python may not be imported here (the service's refusal, given the
        check's name), None when it may."""
        # ConfigError for a name that is not one (a bad connector spec or prompt file too)
        self.bot_spec: BotSpec = parse_bot_spec(
            models.bot, bot_prompt=models.bot_prompt, timeout_s=models.bot_timeout_s, max_reply_bytes=models.bot_max_reply_bytes
        )
        for judge in jurors_of(models.judge) or [models.judge]:
            parse_model_name(judge)
        if models.user not in (PROFILE_MODEL, REPLAY_USER):
            parse_model_name(models.user)
        if cache and store is None:
            raise ValueError("the reply cache needs a store")
        self.names = models
        self.store = store
        self.cache = cache
        self.judge_timeout_s = judge_timeout_s
        self.env = env
        self.prices = dict(prices or {})
        self.check_limits = check_limits
        self.python_refusal = python_refusal
        self._models: dict[tuple[str, str], ChatModel] = {}
        self._cached: list[CachedModel] = []
        self._bot: Bot | None = bot
        self._judge: Judge | None = None
        self.calibration: CalibrationPolicy | None = None
        """What was measured of the judge, marking its verdicts (`load_calibration`)."""
        self._on_retry: Any = None
        self._on_success: Any = None
        self.retries = 0
        self.rate_limited = 0
        self.reported_context: dict[str, int] = {}
        """Role -> the context length its endpoint reported at the check before launch (`preflight`)."""

    @classmethod
    def for_batch(cls, options: BatchOptions, *, store: Store | None = None, **kwargs: Any) -> BatchModels:
        """The models of a batch with these options: its roles, reply cache, prices and the
        judge's time limit (the conversation's)."""
        kwargs.setdefault("judge_timeout_s", options.timeout_s)
        return cls(options.models, store=store, cache=options.cache, prices=options.prices, check_limits=options.limits, **kwargs)

    def generation(self, role: str) -> GenerateConfig | None:
        """The generation settings given for `role` (`--gen`), None when none was."""
        return self.names.generation.get(role)

    # -- wiring to the adaptive limit ----------------------------------------------------------

    def attach(self, on_retry: Any = None, on_success: Any = None) -> None:
        """Where LLM calls report retries and successes (the batch's AdaptiveLimit)."""
        self._on_retry = on_retry
        self._on_success = on_success

    def _retry_heard(self, event: RetryEvent) -> None:
        self.retries += 1
        if event.rate_limited:
            self.rate_limited += 1
        if self._on_retry is not None:
            self._on_retry(event)

    def _success_heard(self) -> None:
        if self._on_success is not None:
            self._on_success()

    # -- models --------------------------------------------------------------------------------

    def chat_model(self, name: str, role: str) -> ChatModel:
        """The shared LLM `name` for `role`, observed, and cached when the batch caches (the
        offline roles are not models: see `bot`, `user` and `judge`)."""
        key = (name, role)
        model = self._models.get(key)
        if model is None:
            raw = get_model(name, role=role, on_retry=self._retry_heard, env=self.env, prices=self.prices)
            model = ObservedModel(raw, self._success_heard)
            if self.cache:
                assert self.store is not None
                cached = CachedModel(model, self.store)
                self._cached.append(cached)
                model = cached
            self._models[key] = model
        return model

    def context_tokens(self, role: str) -> int:
        """The context length `role`'s prompts are fitted to (see the module doc)."""
        explicit = {"bot": self.names.bot_context, "user": self.names.user_context, "judge": self.names.judge_context}.get(role)
        return context_tokens(explicit, self.reported_context.get(role) or self.names.endpoint_context.get(role))

    def user_model_name(self, spec: ConversationSpec) -> str:
        name = self.names.user
        return spec.llm.qualified_model if name == PROFILE_MODEL else name

    def bot(self) -> Bot:
        """The bot under test, built once: the order bot, a prompt bot or a connector."""
        if self._bot is None:
            self._bot = build_bot(
                self.bot_spec,
                lambda name: self.chat_model(name, "bot"),
                env=self.env,
                context_tokens=self.context_tokens("bot"),
                config=self.generation("bot"),
            )
        return self._bot

    def user(self, spec: ConversationSpec, *, world: WorldDefinition | None = None, customer: CustomerFacts | None = None) -> UserSimulator:
        """A fresh simulated customer for one conversation of `spec`, on `world`, knowing what
        `customer` says of itself (its credentials, on a world where it authenticates)."""
        name = self.user_model_name(spec)
        if name == REPLAY_USER:  # each run brings its own stored customer (PlannedRun.replay)
            raise ParleyError(f"{spec.spec_id}: a replayed customer needs the stored conversation it replays")
        bot_fallback = declared_fallback(self.bot())
        if name == OFFLINE:
            return make_user_simulator(spec, OFFLINE, bot_fallback=bot_fallback, world=world, customer=customer)
        from parley.core.users import LLMUser, attacker_spec, profile_generation

        if spec.attack is not None and world is not None:  # an LLM attacker: told its strategy and objective
            spec = attacker_spec(spec, world, customer)
        config = profile_generation(spec).overlaid(self.generation("user"))
        return LLMUser(
            spec,
            self.chat_model(name, "user"),
            config=config,
            bot_fallback=bot_fallback,
            context_tokens=self.context_tokens("user"),
            world=world,
            customer=customer,
        )

    def _llm_judge(self, name: str) -> LLMJudge:
        return LLMJudge(
            self.chat_model(name, "judge"),
            config=judge_generation(self.generation("judge")),
            context_tokens=self.context_tokens("judge"),
        )

    def judge(self) -> Judge:
        """The batch's judge, built once: offline, a model, or a jury of models (`jury:A,B,C`),
        under its time limit and with the batch's calibration policy."""
        if self._judge is None:
            name = self.names.judge
            jurors = jurors_of(name)
            inner: Judge
            if jurors is not None:
                inner = Jury([self._llm_judge(juror) for juror in jurors])
            else:
                inner = OfflineJudge() if name == OFFLINE else self._llm_judge(name)
            self._judge = BoundedJudge(inner, self.judge_timeout_s, calibration=self.calibration)
        return self._judge

    def judge_key(self) -> JudgeKey | None:
        """What the judge is for calibration: its model (or jury), the endpoint(s) it is called
        at (without credentials), parley's judge prompt version and its generation settings;
        None for the offline judge."""
        name = self.names.judge
        if name == OFFLINE:
            return None
        endpoints = []
        for juror in jurors_of(name) or [name]:
            try:
                endpoints.append(public_endpoint(parse_model_name(juror).resolve(self.env, role="judge").base_url))
            except ConfigError:  # its base URL is not set: the check before launch says so
                endpoints.append("?")
        judge = self.judge()
        inner = getattr(judge, "inner", judge)
        first = inner.jurors[0] if isinstance(inner, Jury) else inner
        config = getattr(first, "config", None)
        return JudgeKey(
            model=name,
            endpoint=",".join(endpoints),
            prompt_version=judge_prompt_version(),
            generation=config.model_dump(exclude_none=True) if config is not None else {},
        )

    async def load_calibration(self, *, min_kappa: float, require: bool) -> CalibrationPolicy | None:
        """Read what was measured of this judge (the store's calibrations of its key) into the
        policy its verdicts are marked with; None (nothing to mark) for the offline judge."""
        key = self.judge_key()
        if key is None:
            return None
        measured = await asyncio.to_thread(calibrations_for, self.store, key) if self.store is not None else []
        self.calibration = policy_for(key, measured, min_kappa=min_kappa, require=require)
        if isinstance(self._judge, BoundedJudge):
            self._judge.calibration = self.calibration
        return self.calibration

    async def aclose(self) -> None:
        """Close what the bot holds open (a connector's HTTP client); the shared model clients
        are closed by their owner (parley.core.models.openai_provider.aclose_clients)."""
        close = getattr(self._bot, "aclose", None)
        if callable(close):
            await close()

    # -- up-front checks -----------------------------------------------------------------------

    def endpoints(self, specs: Iterable[ConversationSpec] = ()) -> list[tuple[str, str]]:
        """Every (role, model name) the batch will call over HTTP."""
        wanted: dict[tuple[str, str], None] = {}
        bot_model = self.bot_spec.model_name  # None: a connector, which needs no key
        if bot_model is not None and bot_model != OFFLINE:
            wanted[("bot", bot_model)] = None
        if self.names.user == PROFILE_MODEL:
            for spec in specs:
                if spec.kind != "playbook" and spec.llm.qualified_model != OFFLINE:
                    wanted[("user", spec.llm.qualified_model)] = None
        elif self.names.user not in (OFFLINE, REPLAY_USER):
            wanted[("user", self.names.user)] = None
        for judge in jurors_of(self.names.judge) or [self.names.judge]:
            if judge != OFFLINE:
                wanted[("judge", judge)] = None
        return list(wanted)

    def check_keys(self, specs: Iterable[ConversationSpec] = ()) -> None:
        """Resolve every endpoint now: ConfigError (one line: which variable, which role) for
        the first key or base URL that is missing. No request is sent. With specs, a prompt
        bot's placeholders must be filled by each of them; an http: connector's header
        variables must be set."""
        specs = list(specs)
        for role, name in self.endpoints(specs):
            model = get_model(name, role=role, env=self.env)
            check = getattr(model, "check", None)
            if callable(check):
                check()
        self.load_python_checks(specs)
        bot = self.bot() if self.bot_spec.kind in ("prompt", "http", "rasa", "taskyto", "python") else None  # a Python bot's import, now
        check = getattr(bot, "check", None)
        if callable(check):
            check()
        template = getattr(bot, "template", None)
        if template is not None and specs:
            from parley.core.bots import check_prompt_variables

            check_prompt_variables(template, specs, datetime.date.today())

    def load_python_checks(self, specs: Iterable[ConversationSpec]) -> None:
        """Import every check written in Python the specs ask for, now, once (ConfigError naming
        the first that cannot be); PythonCodeRefused first when this process may not run them."""
        from parley.core.evaluation import load_python_checks, python_check_targets

        targets = python_check_targets(specs)
        if targets and self.python_refusal is not None:
            raise PythonCodeRefused(self.python_refusal(targets[0]))
        load_python_checks(specs)

    def check_budget(self, budget_usd: float | None, specs: Iterable[ConversationSpec] = ()) -> None:
        """ConfigError when a batch with a budget uses a model whose price parley does not know:
        its cost could not be measured, so the budget could not stop it."""
        if budget_usd is None:
            return
        from parley.core.errors import ConfigError
        from parley.core.models import price_for

        unpriced = [(role, name) for role, name in self.endpoints(specs) if price_for(name, self.prices) is None]
        if unpriced:
            named = ", ".join(f"the {role}'s {name}" for role, name in unpriced)
            raise ConfigError(
                f"--budget needs every model's price, and the price table does not know {named}: the cost could not be "
                f"measured (give it: --price {unpriced[0][1]}=INPUT/OUTPUT in USD per million tokens, =0 for a free one; "
                "or run without --budget)"
            )

    def reachability_targets(self, specs: Iterable[ConversationSpec] = ()) -> list[Target]:
        """Every endpoint the batch will call over HTTP, to check before it launches: each LLM
        role's `/models` with the role's key, and a connector bot's URL with its headers."""
        targets = []
        for role, name in self.endpoints(specs):
            model = get_model(name, role=role, env=self.env)
            check = getattr(model, "check", None)
            if not callable(check):
                continue
            endpoint = check()
            spec = getattr(model, "spec", None)
            key_set = endpoint.api_key_env is not None
            base = endpoint.base_url.rstrip("/")
            targets.append(
                Target(
                    role=role,
                    name=name,
                    url=base,
                    probe_url=f"{base}/models",
                    kind="model",
                    model=getattr(spec, "model", None),
                    key_env=endpoint.api_key_env or getattr(spec, "api_key_env", None),
                    key_set=key_set,
                    headers={"Authorization": f"Bearer {endpoint.api_key}"} if key_set else {},
                )
            )
        if self.bot_spec.kind in ("rasa", "taskyto", "http"):
            bot = self.bot()
            url = getattr(bot, "probe_url", None)
            if url:
                headers: dict[str, str] = getattr(bot, "probe_headers", dict)()
                names: list[str] = getattr(bot, "credential_names", list)()
                address: str = getattr(bot, "probe_address", lambda: url)()  # `${NAME}`s resolved; messages show the names
                targets.append(
                    Target(role="bot", name=bot.name, url=url, probe_url=address, key_env=", ".join(names) or None, headers=headers)
                )
        return targets

    async def preflight(self, specs: Iterable[ConversationSpec] = ()) -> PreflightReport:
        """The one check before launch (parley.core.engine.reachability): UnreachableEndpoint or
        CredentialsRefused (one line: the role, the URL, the key's variable, the status) when an
        endpoint the batch will call does not answer or refuses its key; else what each endpoint
        said (the models it lists, the context length it reports) and the warnings to show."""
        report = await run_preflight(self.reachability_targets(specs))
        self.reported_context = {role: n for role, n in report.context_lengths().items() if n is not None}
        # a bot or judge built before the check (loading may build them) is built again on its
        # model's reported context; a connector is not refitted (parley builds no prompt for it)
        if "bot" in self.reported_context and self.bot_spec.kind in ("model", "prompt"):
            self._bot = None
        if "judge" in self.reported_context:
            self._judge = None  # built again with the same calibration policy
        return report

    def with_reported_context(self, options: BatchOptions) -> BatchOptions:
        """`options` with the context lengths the check before launch found kept in its models
        (`RoleModels.endpoint_context`), for its report and a resume. They replace what a parent
        batch found: a re-run's roles may be other models."""
        found = dict(self.reported_context)
        return options.model_copy(update={"models": options.models.model_copy(update={"endpoint_context": found})})

    # -- cache statistics ----------------------------------------------------------------------

    @property
    def cache_hits(self) -> int:
        return sum(c.hits for c in self._cached)

    @property
    def cache_misses(self) -> int:
        return sum(c.misses for c in self._cached)
