"""Resource bindings, registries, merging, lifetimes, scopes and snapshottables."""

from __future__ import annotations

import threading
from typing import Protocol

import pytest

from haversack import Binding, ResourceRegistry, Resources, Scope
from haversack.errors import NameConflictError, ResourceError
from haversack.filesystem import Snapshottable


class Config:
    def __init__(self, url: str = "http://x") -> None:
        self.url = url


class Client:
    def __init__(self, config: Config, log: list[str] | None = None, name: str = "client") -> None:
        self.config = config
        self.log = log
        self.name = name
        self.closed = False

    def close(self) -> None:
        self.closed = True
        if self.log is not None:
            self.log.append(self.name)


class Tracer(Client):
    pass


class Store:
    """A snapshottable resource."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def snapshot(self) -> object:
        return dict(self.data)

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, dict)
        self.data = dict(snapshot)


class Managed:
    """A context manager without close()."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def __enter__(self) -> Managed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.log.append("managed")


class Greeter(Protocol):
    def greet(self) -> str: ...


# -- Binding ------------------------------------------------------------------------------------


def test_binding_defaults_and_validation():
    binding = Binding(Config, lambda r: Config())
    assert binding.scope is Scope.SINGLETON
    assert binding.default is False
    assert binding.prebuilt is False
    with pytest.raises(TypeError, match="Binding needs a type to provide"):
        Binding("Config", lambda r: Config())  # type: ignore[arg-type]
    with pytest.raises(
        TypeError,
        match=r"must be callable \(resolver\) -> instance.*"
        r"use Binding\.instance\(Config, obj\)",
    ):
        Binding(Config, Config())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scope must be a Scope"):
        Binding(Config, lambda r: Config(), "singleton")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pre-built instance can only be bound with"):
        Binding(Config, lambda r: Config(), Scope.TOOL_CALL, prebuilt=True)


def test_binding_can_be_subscripted():
    binding = Binding[Config](Config, lambda r: Config())
    assert binding == Binding(Config, binding.factory)


def test_binding_instance_checks_type_and_is_equal_for_the_same_object():
    config = Config()
    assert Binding.instance(Config, config) == Binding.instance(Config, config)
    assert Binding.instance(Config, config) != Binding.instance(Config, Config())
    with pytest.raises(
        TypeError,
        match=r"Binding.instance\(Config, obj\): obj is a Store, not a "
        "Config",
    ):
        Binding.instance(Config, Store())  # type: ignore[arg-type]
    # Protocols that are not runtime-checkable cannot be tested; the binding is accepted.
    assert Binding.instance(Greeter, object()).prebuilt  # type: ignore[type-abstract]


# -- ResourceRegistry -----------------------------------------------------------------------------


def test_registry_lookup():
    config_binding = Binding(Config, lambda r: Config())
    registry = ResourceRegistry.of(config_binding)
    assert registry.get(Config) is config_binding
    assert registry.get_optional(Client) is None
    assert Config in registry
    assert Client not in registry
    assert list(registry) == [Config]
    assert len(registry) == 1
    assert registry == ResourceRegistry({Config: config_binding})
    with pytest.raises(
        ResourceError,
        match=r"^No resource is bound for \S*test_resources\.Client\. "
        r"Bound types: \S*test_resources\.Config\.$",
    ):
        registry.get(Client)
    with pytest.raises(ResourceError, match=r"No types are bound\.$"):
        ResourceRegistry().get(Client)


def test_registry_mapping_is_validated():
    with pytest.raises(
        TypeError, match=r"the value for Config is a Config\. Use Binding\.instance"
    ):
        ResourceRegistry({Config: Config()})  # type: ignore[dict-item]
    with pytest.raises(
        ValueError, match="key Client does not match its binding, which provides Config"
    ):
        ResourceRegistry({Client: Binding(Config, lambda r: Config())})
    with pytest.raises(TypeError, match=r"ResourceRegistry\.of takes Binding objects"):
        ResourceRegistry.of(Config())  # type: ignore[arg-type]


def test_default_gives_way_to_non_default_in_either_order():
    fallback = Binding(Store, lambda r: Store(), default=True)
    chosen = Binding(Store, lambda r: Store())
    a = ResourceRegistry.of(fallback)
    b = ResourceRegistry.of(chosen)
    assert a.merge(b).get(Store) is chosen
    assert b.merge(a).get(Store) is chosen
    assert ResourceRegistry.of(fallback, chosen).get(Store) is chosen
    assert ResourceRegistry.of(chosen, fallback).get(Store) is chosen
    # Merging never mutates either side.
    assert a.get(Store) is fallback


def test_merge_keeps_both_sides_and_identical_bindings_do_not_conflict():
    config = Binding(Config, lambda r: Config())
    client = Binding(Client, lambda r: Client(r.get(Config)))
    merged = ResourceRegistry.of(config).merge(ResourceRegistry.of(client, config))
    assert list(merged) == [Config, Client]
    assert merged.merge(merged) == merged


def test_two_non_defaults_conflict_naming_the_type():
    first = Binding(Store, lambda r: Store())
    second = Binding(Store, lambda r: Store())
    with pytest.raises(NameConflictError) as info:
        ResourceRegistry.of(first).merge(ResourceRegistry.of(second))
    error = info.value
    assert error.kind == "resource"
    assert error.name.endswith("test_resources.Store")
    assert len(error.contributors) == 2
    assert "Two bindings provide " in str(error)
    assert "test_resources.Store: Store from factory" in str(error)
    assert "remove one, or mark the fallback default=True" in str(error)
    with pytest.raises(NameConflictError, match="Two bindings provide"):
        ResourceRegistry.of(first, second)


def test_two_defaults_conflict():
    with pytest.raises(
        NameConflictError,
        match=r"Two default bindings provide .*Neither gives way"
        r".*bind a non-default Store to choose one",
    ):
        ResourceRegistry.of(
            Binding(Store, lambda r: Store(), default=True),
            Binding(Store, lambda r: Store(), default=True),
        )


def test_merge_needs_a_registry():
    with pytest.raises(TypeError, match="merge\\(\\) needs a ResourceRegistry, got dict"):
        ResourceRegistry().merge({})  # type: ignore[arg-type]


# -- Resources: resolution ----------------------------------------------------------------------


def test_lazy_singletons_with_dependencies():
    built: list[str] = []

    def make_config(r):
        built.append("config")
        return Config("http://api")

    def make_client(r):
        built.append("client")
        return Client(r.get(Config))

    registry = ResourceRegistry.of(Binding(Config, make_config), Binding(Client, make_client))
    with registry.open() as resources:
        assert isinstance(resources, Resources)
        assert built == []
        client = resources.get(Client)
        assert client.config.url == "http://api"
        assert resources.get(Client) is client
        assert resources.get(Config) is client.config
        assert built == ["client", "config"]
        assert Client in resources
        assert resources.get_optional(Store) is None


def test_eager_open_builds_singletons_in_binding_order():
    built: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Config, lambda r: built.append("config") or Config()),
        Binding(Tracer, lambda r: Tracer(Config()), Scope.TOOL_CALL),
        Binding(Client, lambda r: built.append("client") or Client(r.get(Config))),
    )
    with registry.open(eager=True):
        assert built == ["config", "client"]


def test_eager_open_failure_closes_what_was_built():
    log: list[str] = []

    def broken(r):
        raise OSError("disk")

    registry = ResourceRegistry.of(
        Binding(Client, lambda r: Client(Config(), log)), Binding(Store, broken)
    )
    with pytest.raises(ResourceError, match="its factory raised OSError: disk"):
        registry.open(eager=True)
    assert log == ["client"]


def test_get_unbound_names_the_type_and_lists_bound_types():
    registry = ResourceRegistry.of(
        Binding(Config, lambda r: Config()), Binding.instance(Store, Store())
    )
    with registry.open() as resources, pytest.raises(ResourceError) as info:
        resources.get(Client)
    message = str(info.value)
    assert message.startswith("No resource is bound for ")
    assert "test_resources.Client. Bound types: " in message
    assert "test_resources.Config, " in message
    assert message.endswith("test_resources.Store.")
    assert isinstance(info.value, LookupError)


def test_factory_failure_names_the_binding_and_chains():
    def broken(r):
        raise ValueError("bad url")

    registry = ResourceRegistry.of(Binding(Config, broken))
    with registry.open() as resources, pytest.raises(ResourceError) as info:
        resources.get(Config)
    assert str(info.value) == (
        "The binding Config from factory "
        f"{__name__}.test_factory_failure_names_the_binding_and_chains.<locals>.broken "
        "(SINGLETON) failed: its factory raised ValueError: bad url"
    )
    assert isinstance(info.value.__cause__, ValueError)


def test_nested_factory_failure_names_the_path_and_is_not_cached():
    calls = []

    def broken(r):
        calls.append(1)
        raise ValueError("bad url")

    registry = ResourceRegistry.of(
        Binding(Config, broken), Binding(Client, lambda r: Client(r.get(Config)))
    )
    with registry.open() as resources:
        with pytest.raises(
            ResourceError,
            match=r"failed while building Client -> Config: its "
            "factory raised ValueError: bad url",
        ):
            resources.get(Client)
        with pytest.raises(ResourceError):
            resources.get(Client)
    assert len(calls) == 2


def test_unbound_dependency_inside_a_factory_notes_the_path():
    registry = ResourceRegistry.of(Binding(Client, lambda r: Client(r.get(Config))))
    with registry.open() as resources, pytest.raises(ResourceError) as info:
        resources.get(Client)
    assert "No resource is bound for" in str(info.value)
    assert info.value.__notes__ == ["while building Client"]


class A:
    pass


class B:
    pass


class C:
    pass


class Bad:
    def close(self):
        raise OSError("stuck")


def test_cycle_is_detected_and_named():
    registry = ResourceRegistry.of(
        Binding(A, lambda r: r.get(B)),
        Binding(B, lambda r: r.get(C)),
        Binding(C, lambda r: r.get(B)),
    )
    with registry.open() as resources, pytest.raises(ResourceError) as info:
        resources.get(A)
    assert str(info.value) == (
        "Dependency cycle among resources: B -> C -> B. A factory asks, directly or through "
        "others, for the type it is building; break the cycle."
    )
    assert info.value.__notes__ == ["while building A -> B -> C"]


def test_self_cycle():
    registry = ResourceRegistry.of(Binding(Config, lambda r: r.get(Config)))
    with (
        registry.open() as resources,
        pytest.raises(
            ResourceError,
            match=r"cycle among "
            r"resources: Config -> Config\.",
        ),
    ):
        resources.get(Config)


def test_factory_returning_the_wrong_type_is_rejected():
    registry = ResourceRegistry.of(Binding(Config, lambda r: Store()))  # type: ignore[arg-type,return-value]
    with (
        registry.open() as resources,
        pytest.raises(ResourceError, match="returned a Store, not a Config"),
    ):
        resources.get(Config)


def test_get_after_close_raises():
    resources = ResourceRegistry.of(Binding(Config, lambda r: Config())).open()
    resources.close()
    assert resources.closed
    with pytest.raises(ResourceError, match="these resources are closed"):
        resources.get(Config)
    resources.close()  # idempotent


def test_get_optional_of_a_built_singleton_after_close_raises():
    # get_optional hands out built singletons without the lock; closing still ends that.
    resources = ResourceRegistry.of(Binding(Config, lambda r: Config())).open()
    built = resources.get_optional(Config)
    assert built is not None
    assert resources.get_optional(Config) is built
    resources.close()
    with pytest.raises(ResourceError, match="these resources are closed"):
        resources.get_optional(Config)


def test_concurrent_gets_build_one_singleton():
    barrier = threading.Barrier(8)
    built = []

    def make(r):
        built.append(1)
        return Config()

    registry = ResourceRegistry.of(Binding(Config, make))
    seen = []
    with registry.open() as resources:

        def worker():
            barrier.wait()
            seen.append(resources.get(Config))

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(built) == 1
    assert len({id(s) for s in seen}) == 1


# -- Resources: lifetimes -----------------------------------------------------------------------


def test_close_in_reverse_creation_order_and_never_prebuilt():
    log: list[str] = []
    prebuilt = Client(Config(), log, "prebuilt")
    registry = ResourceRegistry.of(
        Binding(Config, lambda r: Config()),
        Binding(Client, lambda r: Client(r.get(Config), log, "client")),
        Binding(Tracer, lambda r: Tracer(r.get(Config), log, f"tracer-after-{r.get(Client).name}")),
        Binding(Managed, lambda r: Managed(log)),
        Binding.instance(Store, Store()),
    )
    other = ResourceRegistry.of(Binding.instance(Client, prebuilt))
    with registry.open() as resources:
        resources.get(Managed)
        resources.get(Tracer)
        resources.get(Store)
    # Created: Managed, Client (dependency of Tracer), Tracer -> closed in reverse.
    assert log == ["tracer-after-client", "client", "managed"]
    with other.open() as resources:
        assert resources.get(Client) is prebuilt
    assert not prebuilt.closed


def test_close_failures_do_not_stop_other_closes_and_are_reported():
    log: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Client, lambda r: Client(Config(), log)), Binding(Bad, lambda r: Bad())
    )
    resources = registry.open()
    resources.get(Client)
    resources.get(Bad)
    with pytest.raises(
        ResourceError,
        match=r"Closing 1 resource\(s\) failed while closing "
        r"resources: Bad: OSError: stuck",
    ) as info:
        resources.close()
    assert isinstance(info.value.__cause__, OSError)
    assert log == ["client"]


def test_close_failure_does_not_mask_the_body_exception(caplog):
    registry = ResourceRegistry.of(Binding(Bad, lambda r: Bad()))

    def body():
        with registry.open() as resources:
            resources.get(Bad)
            raise KeyError("body")

    with pytest.raises(KeyError):
        body()
    assert "Closing Bad failed while closing resources" in caplog.text


def test_tool_call_scope_gives_fresh_instances_closed_at_its_end():
    log: list[str] = []
    counter = iter(range(100))
    registry = ResourceRegistry.of(
        Binding(Config, lambda r: Config()),
        Binding(
            Tracer, lambda r: Tracer(r.get(Config), log, f"tracer{next(counter)}"), Scope.TOOL_CALL
        ),
    )
    with registry.open() as resources:
        with resources.tool_call() as scoped:
            assert scoped is resources
            first = resources.get(Tracer)
            assert resources.get(Tracer) is first
        assert log == ["tracer0"]
        with resources.tool_call():
            second = resources.get(Tracer)
            assert second is not first
            assert second.config is first.config  # the singleton is shared
        assert log == ["tracer0", "tracer1"]
        with pytest.raises(
            ResourceError,
            match=r"\S*Tracer is TOOL_CALL-scoped: get it inside "
            r"`with resources.tool_call\(\):`\.",
        ):
            resources.get(Tracer)


def test_tool_call_closes_even_when_the_call_fails():
    log: list[str] = []
    registry = ResourceRegistry.of(
        Binding(Tracer, lambda r: Tracer(Config(), log), Scope.TOOL_CALL)
    )
    with registry.open() as resources:

        def failing_call():
            with resources.tool_call():
                resources.get(Tracer)
                raise RuntimeError("handler failed")

        with pytest.raises(RuntimeError):
            failing_call()
        assert log == ["client"]
        with resources.tool_call():  # a new call can open after a failed one
            pass


def test_tool_calls_do_not_nest_and_scopes_are_single_use():
    registry = ResourceRegistry.of()
    with registry.open() as resources:
        scope = resources.tool_call()
        with (
            scope,
            pytest.raises(ResourceError, match="already open in this thread"),
            resources.tool_call(),
        ):
            pass
        with pytest.raises(ResourceError, match="already used"), scope:
            pass
    with pytest.raises(ResourceError, match="resources are closed"), resources.tool_call():
        pass


def test_tool_calls_are_per_thread():
    registry = ResourceRegistry.of(Binding(Tracer, lambda r: Tracer(Config()), Scope.TOOL_CALL))
    results = {}
    with registry.open() as resources:

        def call(name):
            with resources.tool_call():
                results[name] = resources.get(Tracer)

        with resources.tool_call():
            mine = resources.get(Tracer)
            thread = threading.Thread(target=call, args=("other",))
            thread.start()
            thread.join()
    assert results["other"] is not mine


def test_singleton_cannot_depend_on_tool_call_resource():
    registry = ResourceRegistry.of(
        Binding(Tracer, lambda r: Tracer(Config()), Scope.TOOL_CALL),
        Binding(Client, lambda r: Client(r.get(Tracer).config)),
    )
    with (
        registry.open() as resources,
        resources.tool_call(),
        pytest.raises(
            ResourceError,
            match=r"TOOL_CALL-scoped, so the singleton Client -> Tracer cannot "
            r"depend on it",
        ),
    ):
        resources.get(Client)


def test_prototype_is_fresh_each_time_and_closed_with_its_owner():
    log: list[str] = []
    counter = iter(range(100))
    registry = ResourceRegistry.of(
        Binding(Tracer, lambda r: Tracer(Config(), log, f"p{next(counter)}"), Scope.PROTOTYPE),
        Binding(Client, lambda r: Client(r.get(Tracer).config, log, "singleton")),
    )
    with registry.open() as resources:
        outside = resources.get(Tracer)
        with resources.tool_call():
            assert resources.get(Tracer) is not outside  # p1, owned by the call
            resources.get(Client)  # builds p2 for the singleton: it lives to the end
        assert log == ["p1"]
    assert log == ["p1", "singleton", "p2", "p0"]


def test_snapshottables_are_live_singletons_in_binding_order():
    prebuilt = Store()

    class OtherStore(Store):
        pass

    registry = ResourceRegistry.of(
        Binding(Config, lambda r: Config()),
        Binding(OtherStore, lambda r: OtherStore()),
        Binding.instance(Store, prebuilt),
        Binding(Tracer, lambda r: Tracer(Config()), Scope.TOOL_CALL),
    )
    with registry.open() as resources:
        # Pre-built instances count at once; factory-built ones once they exist.
        assert resources.snapshottables() == (prebuilt,)
        other = resources.get(OtherStore)
        resources.get(Config)
        found = resources.snapshottables()
        assert found == (other, prebuilt)
        assert all(isinstance(s, Snapshottable) for s in found)


def test_snapshottables_deduplicates_one_object_bound_twice():
    store = Store()

    class Alias(Store):
        pass

    registry = ResourceRegistry.of(
        Binding.instance(Store, store), Binding(Alias, lambda r: r.get(Store))
    )  # type: ignore[arg-type,return-value]
    with registry.open() as resources:
        assert resources.snapshottables() == (store,)


# ---------------------------------------------------------------- what bind() and compose() take
def test_prompt_bind_turns_a_mapping_into_a_registry_that_opens() -> None:
    from haversack import Prompt

    config = Config()
    prompt = Prompt(ns="t", key="k").bind(resources={Config: config})
    assert isinstance(prompt.resources, ResourceRegistry)
    assert prompt.resources.get(Config).prebuilt
    with prompt.resources.open() as live:
        assert live.get(Config) is config
    client = Binding(Client, lambda r: Client(r.get(Config)))
    rebound = prompt.bind(resources={Client: client})
    assert list(rebound.resources or ()) == [Config, Client]
    assert prompt.resources is not rebound.resources  # bind() copies


def test_bind_and_compose_refuse_a_binding_keyed_by_another_type_alike() -> None:
    from haversack import Prompt, compose

    wrong = {Config: Binding(Client, lambda r: Client(Config()))}
    with pytest.raises(ValueError, match=r"provides Client; key each binding") as bound:
        Prompt(ns="t", key="k").bind(resources=wrong)
    with pytest.raises(ValueError, match="key each binding") as composed:
        compose(ns="t", key="k", packs=[], resources=wrong)
    assert str(bound.value) == str(composed.value)


def test_bind_and_compose_refuse_resources_of_the_wrong_kind_alike() -> None:
    from haversack import Prompt, compose

    with pytest.raises(TypeError, match="got list") as bound:
        Prompt(ns="t", key="k").bind(resources=[Config()])  # type: ignore[arg-type]
    with pytest.raises(TypeError) as composed:
        compose(ns="t", key="k", packs=[], resources=[Config()])  # type: ignore[arg-type]
    assert str(bound.value) == str(composed.value)


def test_the_prompt_model_loads_no_live_resources() -> None:
    """Declarations are the model's; only opening a registry loads the runtime's resources."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from haversack._prompt import Prompt\n"
        "from haversack._bindings import Binding\n"
        "p = Prompt(ns='t', key='k').bind(resources={int: 3})\n"
        "print('haversack._resources' in sys.modules)\n"
        "p.resources.open().close()\n"
        "print('haversack._resources' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
