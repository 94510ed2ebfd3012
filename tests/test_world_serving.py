"""A world served over HTTP to bots parley does not run: each conversation's world behind its own
unguessable URL, bound to its customer, every call recorded as that conversation's, 410 once it ended."""

from __future__ import annotations

import asyncio
import datetime

import httpx

from parley.core.world import WorldTemplate, WorldTools, load_world
from parley.core.world.serving import WorldServer

TODAY = datetime.date(2026, 11, 21)


def conversation(customer: str) -> WorldTools:
    world = load_world("orders")
    return WorldTools(world, WorldTemplate(world, TODAY).new_copy(), customer)


async def test_two_conversations_at_once_reach_only_their_own_world_as_their_own_customer():
    maya, daniel = conversation("C-100"), conversation("C-200")
    async with WorldServer() as server, httpx.AsyncClient(timeout=30) as client:
        maya_url, daniel_url = server.register(maya), server.register(daniel)
        assert maya_url != daniel_url and maya_url.startswith(server.base_url + "/w/")
        cancels = await asyncio.gather(
            client.post(f"{maya_url}/tools/cancel_order", json={"order_id": "ORD-1004"}),
            # a header naming another customer is not trusted: the URL carries the identity
            client.post(f"{daniel_url}/tools/cancel_order", json={"order_id": "ORD-1004"}, headers={"X-Customer-Id": "C-100"}),
            client.post(f"{daniel_url}/tools/cancel_order", json={"order_id": "ORD-2001", "customer_id": "C-100"}),
        )
    assert [r.status_code for r in cancels] == [200, 403, 200]
    assert cancels[1].json() == {"detail": {"reason": "not_your_order", "message": "Order ORD-1004 does not belong to customer C-200."}}
    assert [c.describe().split(":")[0] for c in maya.copy.diff().record_changes()] == ["orders/ORD-1004"]
    assert [c.describe().split(":")[0] for c in daniel.copy.diff().record_changes()] == ["orders/ORD-2001"]
    assert [(r.name, r.ok, r.customer_id) for r in maya.records] == [("cancel_order", True, "C-100")]
    assert [(r.name, r.ok, r.customer_id, r.ignored_arguments) for r in daniel.records] == [
        ("cancel_order", False, "C-200", []),
        ("cancel_order", True, "C-200", ["customer_id"]),
    ]


async def test_a_call_after_the_conversation_ended_is_gone_and_a_guessed_url_is_nothing():
    tools = conversation("C-100")
    async with WorldServer() as server, httpx.AsyncClient(timeout=30) as client:
        url = server.register(tools)
        assert (await client.post(f"{url}/tools/list_my_orders")).status_code == 200
        server.close_world(url)
        gone = await client.post(f"{url}/tools/cancel_order", json={"order_id": "ORD-1004"})
        guessed = await client.post(f"{server.base_url}/w/{'A' * 32}/tools/list_my_orders")
    assert gone.status_code == 410 and gone.json()["detail"]["reason"] == "conversation_ended"
    assert guessed.status_code == 404
    assert [r.name for r in tools.records] == ["list_my_orders"] and tools.copy.diff().changes == []


async def test_the_openapi_document_and_the_page_are_made_from_the_worlds_tools():
    tools = conversation("C-100")
    async with WorldServer() as server, httpx.AsyncClient(timeout=30) as client:
        url = server.register(tools)
        document = (await client.get(f"{url}/openapi.json")).json()
        page = await client.get(url + "/", headers={"Accept": "text/html"})
        too_big = await client.post(f"{url}/tools/get_order", content=b"{" + b" " * 300_000 + b"}")
        unknown = await client.post(f"{url}/tools/refund_order", json={})
    assert list(document["paths"]) == [f"/tools/{name}" for name in tools.tool_names]
    cancel = document["paths"]["/tools/cancel_order"]["post"]
    assert cancel["requestBody"]["content"]["application/json"]["schema"]["required"] == ["order_id"]
    assert cancel["tags"] == ["changes the world"]
    assert page.status_code == 200 and "cancel_order" in page.text and "http" not in page.text.split("<script>")[0].replace(url, "")
    assert too_big.status_code == 413 and unknown.status_code == 404 and unknown.json()["detail"]["reason"] == "unknown_tool"


async def test_an_advertised_url_is_where_a_deployed_bot_reaches_the_batchs_worlds(monkeypatch):
    import socket

    from parley.core.engine.spec_worlds import WorldTemplates

    with socket.socket() as probe:  # a free port, as an operator would pick one for PARLEY_WORLD_URL
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("PARLEY_WORLD_URL", f"http://localhost:{port}/")
    templates = WorldTemplates()
    try:
        server = await templates.server()
        url = server.register(conversation("C-100"))
        assert url.startswith(f"http://localhost:{port}/")  # advertised as the operator said, listening on its port
        async with httpx.AsyncClient(timeout=30) as client:
            answer = await client.post(f"{url}/tools/list_my_orders", content=b"{}")
        assert answer.status_code == 200 and {o["customer_id"] for o in answer.json()} == {"C-100"}
    finally:
        await templates.aclose()
