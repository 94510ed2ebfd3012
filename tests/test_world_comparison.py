"""Two states of any world compared record by record (parley.core.world.compare_states), on the
returns desk: what one conversation did and another did not is named by record and field."""

from __future__ import annotations

import datetime

from parley.core.world import WorldTemplate, WorldTools, compare_states, compare_values, load_world
from tests.tau2_support import call

TODAY = datetime.date(2026, 11, 21)


async def test_the_records_one_conversation_changed_are_named_with_their_fields():
    world = load_world("returns")
    template = WorldTemplate(world, TODAY)
    with template.new_copy() as expected, template.new_copy() as actual:
        wanted = WorldTools(world, expected, customer_id="CUS-101")
        done = WorldTools(world, actual, customer_id="CUS-101")
        assert (await call(wanted, "exchange_item", order_id="SO-5001", sku="SKU-TEE", new_variant="XL")).ok
        assert (await call(done, "exchange_item", order_id="SO-5001", sku="SKU-TEE", new_variant="L")).ok
        assert (await call(done, "start_return", order_id="SO-5001", sku="SKU-JKT", reason="too big", refund_method_id="PM-201")).ok
        comparison = compare_states(expected, actual)
        # a copy of another template (another day) is compared record by record, all of them
        with WorldTemplate(world, TODAY - datetime.timedelta(days=1)).new_copy() as elsewhere, template.new_copy() as untouched:
            assert compare_states(expected, elsewhere).describe() == compare_states(expected, untouched).describe() != []
    assert [d.ref for d in comparison.differences] == ["products/SKU-TEE", "returns/RT-9001", "exchanges/EX-7001"]
    products, returns, exchanges = comparison.differences
    assert returns.kind == "unexpected" and returns.owner == "CUS-101"
    assert [f.path for f in exchanges.fields] == ["to_variant"] and exchanges.fields[0].expected == "XL"
    assert {f.path for f in products.fields} == {"variants.XL", "variants.L"}
    assert exchanges.describe() == "exchanges/EX-7001: to_variant: expected 'XL', found 'L'"


def test_lists_compare_as_multisets_and_name_what_only_one_side_has():
    assert compare_values({"tags": [1, 2, 2]}, {"tags": [2, 1, 2]}) == []
    (difference,) = compare_values({"tags": [1, 2, 2], "n": 1}, {"tags": [2, 3], "n": 1.0})
    assert difference.path == "tags[]" and difference.expected == [1, 2] and difference.actual == [3]
    assert difference.describe() == "tags[]: missing [1, 2]; unexpected [3]"
    assert [d.path for d in compare_values({"a": {"b": True}}, {"a": {"b": 1}})] == ["a.b"]
