"""A bus in another process, driven by the contract tests over stdin/stdout.

Each stdin line is a JSON command; each stdout line is the JSON answer
(``{"ok": true, "result": ...}`` or ``{"ok": false, "error": <class>, "message": ...}``).
A transaction can stay open across commands (``begin`` … ``commit``), so a test
can freeze this process mid-transaction and see it fenced when it resumes.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from services.bus import BEGINNING, Bus, GroupMember, OutRecord, Producer, TopicSpec, open_bus


class Worker:
    def __init__(self) -> None:
        self.bus: Bus | None = None
        self.member: GroupMember | None = None
        self.producer: Producer | None = None
        self.txn_context: Any = None
        self.txn: Any = None

    async def handle(self, op: str, args: dict[str, Any]) -> Any:
        handler = getattr(self, f"op_{op}")
        return await handler(**args)

    def _bus(self) -> Bus:
        assert self.bus is not None, "open first"
        return self.bus

    async def op_open(self, url: str) -> None:
        self.bus = open_bus(url)
        await self.bus.start()

    async def op_ensure(self, topics: list[list[Any]]) -> None:
        await self._bus().ensure_topics([TopicSpec(n, p, c) for n, p, c in topics])

    async def op_produce(self, topic: str, values: list[str]) -> list[int]:
        producer = await self._bus().producer()
        try:
            return await producer.send([OutRecord(topic, v.encode(), v.encode()) for v in values])
        finally:
            await producer.close()

    async def op_read(self, topic: str, count: int, timeout_s: float = 15.0) -> list[list[Any]]:
        consumer = await self._bus().consumer(topic, start=BEGINNING)
        records: list[list[Any]] = []
        try:
            async with asyncio.timeout(timeout_s):
                while len(records) < count:
                    for r in await consumer.getmany(timeout_ms=500):
                        records.append([r.offset, (r.value or b"").decode()])
        except TimeoutError:
            pass
        finally:
            await consumer.close()
        return records

    async def op_join(self, group: str, topic: str) -> None:
        self.member = await self._bus().join_group(group, topic, member_id="child")

    async def op_await_leader(self, timeout_s: float = 15.0) -> bool:
        assert self.member is not None
        try:
            async with asyncio.timeout(timeout_s):
                await self.member.leader.wait()
        except TimeoutError:
            return False
        return True

    async def op_leave(self) -> None:
        assert self.member is not None
        await self.member.close()

    async def op_transactional(self, transactional_id: str) -> None:
        self.producer = await self._bus().producer(transactional_id=transactional_id)

    async def op_begin(self) -> None:
        assert self.producer is not None
        self.txn_context = self.producer.transaction()
        self.txn = await self.txn_context.__aenter__()

    async def op_send(self, topic: str, values: list[str]) -> list[int]:
        return list(await self.txn.send([OutRecord(topic, v.encode(), v.encode()) for v in values]))

    async def op_commit(self) -> None:
        context, self.txn_context = self.txn_context, None
        await context.__aexit__(None, None, None)

    async def op_close(self) -> None:
        if self.bus is not None:
            await self.bus.close()


async def main() -> None:
    worker = Worker()
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        command = json.loads(line)
        op = command.pop("op")
        try:
            answer = {"ok": True, "result": await worker.handle(op, command)}
        except Exception as exc:
            answer = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
        print(json.dumps(answer), flush=True)
        if op == "close":
            break


if __name__ == "__main__":
    asyncio.run(main())
