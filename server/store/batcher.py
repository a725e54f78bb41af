"""Group commit: the moves (and the reads that ride with them) that arrive while one round trip is under
way go together in the next."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

import msgspec
from redis.exceptions import NoScriptError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..ops.metrics import Timer
from .keys import Keys
from .records import MOVE_FIELDS, CommitResult, MoveCommit, StoreError, decode_commit
from .replicas import ReplicaAcks

_pack = msgspec.msgpack.Encoder().encode
LANES = 2
"""Round trips under way at once: while one lane waits for Redis, the moves that arrive go out on the other."""
CLUSTER_CALLS_AT_ONCE = 32
"""Script calls a batcher has under way at once on a Redis Cluster (each a command of its own there).
The client's connections go first come first served (store/client.py): the calls of every race that
moved in a tick and their progress reads, hundreds at once, would queue ahead of every other command
of the process; at most this many leave the rest of the pool to them."""
EXCHANGE_TIMEOUT = 5.0
"""Seconds a round trip (its write and every reply) may take before its connection is dropped and the round
trip tried again (redis-py's retry): the socket timeout of the client's other commands, once a round trip."""
RATE_WINDOW = 1.0
"""Seconds over which the batcher counts the moves that arrive, to tell whether lingering pays (:meth:`MoveBatcher._linger_now`)."""
KEY_CACHE_RACES = 4096
"""Races whose keys the batcher keeps encoded (more than move at once on one process)."""
_MOVE_HEAD = bytes([0x90 | (1 + len(MOVE_FIELDS))])
"""A msgpack array (fewer than 16 items): the race's number in the call, then a move's fields (moves.lua)."""
if len(MOVE_FIELDS) >= 15:
    raise ValueError("a move is packed as a msgpack fixarray with its race's number: fewer than 15 fields")
Settled = Callable[["asyncio.Future[CommitResult]"], None]
"""Called with a move's future the moment it is done (:meth:`MoveBatcher.call`)."""
_Item = tuple[int, bytes, "asyncio.Future[CommitResult]", "Settled | None"]
"""A pending move: its seat, its packed fields, its caller's future and what to call when it is done."""


class MoveBatcher:
    """Moves that arrive while a round trip is under way go together in the next one, and so do the
    frequent single script calls it is given (:meth:`script_call`: each hub's progress table, ten times
    a second a race; the heartbeat's every race): they share the moves' write and read instead of a
    redis-py call each.

    Why: redis-py spends most of a call's cost in Python, per command and per
    argument (docs/design.md: about 8,000 sequential EVALSHA a second on one
    connection). On one Redis every pending move goes in one script call
    (moves.lua takes the moves of many races): one write and one read for
    everything waiting, and Redis runs one script, not one a race. On a Redis
    Cluster a script's keys must share a slot, so there it is one call a race,
    sent concurrently, each to its race's node (redis-py refuses script calls
    in a cluster pipeline). Each move is still checked and applied atomically, in
    arrival order.
    """

    def __init__(self, redis: Any, script: Any, tick_ms: int, cluster: bool = False,
                 timer: Timer | None = None, instance: str = "", linger: float = 0.0,
                 rate_window: float = RATE_WINDOW, replicas: ReplicaAcks | None = None) -> None:
        self.redis = redis
        self.replicas = replicas if replicas is not None else ReplicaAcks("off")
        """Whether a round trip of moves ends with a WAIT for a replica (``--replica-acks``): a move's
        future settles only once the WAIT covering it returned, and fails (``unavailable``) if it found
        no replica."""
        self.script = script
        self.tick_ms = tick_ms
        self.instance = instance.encode()
        """This process in the races' listening sets: its moves are announced only to other processes."""
        self.cluster = cluster
        self.timer = timer
        self._pending: dict[str, list[_Item]] = {}
        self._reads: list[_Call] = []
        self._lanes = [_Lane() for _ in range(LANES)]
        self._idle = self._lanes[:]
        """The lanes not flushing now (each flushes what is pending, one round trip at a time)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keys = _KeyCache()
        self._cluster_slots: asyncio.Semaphore | None = None
        self.linger = linger
        """Seconds a round trip waits for more moves before it leaves, on a server busy enough that more
        come meanwhile (``--commit-linger-ms``; 0: never)."""
        self._rate_window = rate_window
        self._arrived = 0
        """Moves that arrived since :attr:`_counted_since`."""
        self._counted_since = 0.0
        self._rate = 0.0
        """Moves a second over the last whole :data:`RATE_WINDOW`."""
        self._lingering = False
        """A lane is waiting out the linger: it takes every move that arrives meanwhile (no other lane starts)."""

    def call(self, race: str, commit: MoveCommit, then: Settled | None = None) -> "asyncio.Future[CommitResult]":
        """Commit one move: a future of its result, which raises
        :class:`StoreError` for a refusal. A plain function returning the future, not a coroutine: one
        coroutine frame fewer to make and resume per move.

        ``then(future)``, if given, is called as soon as the future is done, by the batcher itself
        rather than scheduled by the loop as a done callback would be: one callback handle and one
        loop pass fewer per move. It must not raise (an exception goes to the loop's handler)."""
        loop = self._running_loop()
        fut: asyncio.Future[CommitResult] = loop.create_future()
        items = self._pending.get(race)
        if items is None:
            items = self._pending[race] = []
        # the fields without their array header (see _calls)
        items.append((commit.seat, _pack(commit.lua_args())[1:], fut, then))
        self._arrived += 1
        if self._idle and not self._lingering:
            self._start_lane(loop)
        return fut

    def script_call(self, script: Any, keys: list[str], args: list[Any] | None = None) -> "asyncio.Future[Any]":
        """Run ``script`` (a registered script) on ``keys`` and ``args`` (bytes, text or whole numbers) in the
        next round trip: a future of its raw reply. Why not a call of its own: a read a race ten times a
        second is as many round trips as moves on a quiet server, each paying redis-py's per-command cost;
        and the heartbeat's call for every race served here (server/race/service.py) goes in one round
        trip, not in as many as the races."""
        loop = self._running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        self._reads.append(_Call(script, keys, b"".join(_bulk(key) for key in keys), list(args or ()), [], fut))
        if self._idle and not self._lingering:
            self._start_lane(loop)
        return fut

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, kept: asyncio.get_running_loop() makes a system call (getpid) each time."""
        loop = self._loop
        if loop is None or not loop.is_running():
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def _start_lane(self, loop: asyncio.AbstractEventLoop) -> None:
        lane = self._idle.pop()
        lane.task = task = loop.create_task(self._flush(lane, self._linger_now(loop)))
        task.add_done_callback(self._lane_ended)

    def _linger_now(self, loop: asyncio.AbstractEventLoop) -> float:
        """How long a round trip starting now waits for more moves: :attr:`linger` once the moves of the
        last :data:`RATE_WINDOW` came fast enough that at least one more is due within it, else none.

        Why: a round trip's cost is mostly fixed (redis-py's command and reply, the lane's wake-ups, two
        system calls), so a busy server spends less a move the more moves share one. Idle, a lane
        starts at once and carries what arrived in the same loop pass: at 1,000 moves a second that
        was about one move in two (bench/event_round.py: 0.47 round trips a move). A few milliseconds
        more on a move's answer are nothing to a person; on a quiet server, where no other move would
        come, nothing waits."""
        if not self.linger:
            return 0.0
        now = loop.time()
        span = now - self._counted_since
        if span >= self._rate_window:
            self._rate = self._arrived / span
            self._arrived, self._counted_since = 0, now
        return self.linger if self._rate * self.linger >= 1.0 else 0.0

    def _calls(self, batch: dict[str, list[_Item]]) -> list[_Call]:
        """The script calls for a batch: every race in one on one Redis, a race each on a Cluster (a
        script's keys share one slot there). Each: its keys (and their RESP form), its args, and its
        moves in reply order."""
        groups = [[race] for race in batch] if self.cluster else [list(batch)]
        out = []
        for races in groups:
            named = [self._keys.of(race) for race in races]
            keys: list[str] = []
            bulk: list[bytes] = []
            for race_keys in named:
                keys += race_keys.names
                bulk.append(race_keys.bulk)
            moves: list[bytes] = []
            items: list[_Item] = []
            for r, (race, race_keys) in enumerate(zip(races, named), 1):
                number = _pack(r)
                for item in batch[race]:
                    seat_names, seat_bulk = race_keys.seat(item[0])
                    keys += seat_names
                    bulk.append(seat_bulk)
                    moves.append(_MOVE_HEAD + number + item[1])
                items += batch[race]
            out.append(_Call(self.script, keys, b"".join(bulk), [_pack_list(moves), self.tick_ms, len(races), self.instance],
                             items))
        return out

    async def _round_trip(self, calls: list[_Call], lane: "_Lane", moves: bool) -> list[Any]:
        """Every call's reply, in order. ``moves``: the calls carry moves, and (replica acks on) a WAIT
        follows them on the same connection before any is answered."""
        wait = moves and self.replicas.active
        if self.cluster:
            if self._cluster_slots is None:
                self._cluster_slots = asyncio.Semaphore(CLUSTER_CALLS_AT_ONCE)
            return list(await asyncio.gather(*(self._cluster_call(c, self._cluster_slots, wait) for c in calls),
                                             return_exceptions=True))
        if lane.conn is None:
            lane.conn = await self.redis.connection_pool.get_connection()
            # The lane's own connection (never given back): its round trip has one deadline of its own
            # (_exchange) instead of redis-py's per write (a task and a wait_for) and per reply.
            lane.conn.socket_timeout = None
        conn = lane.conn
        return list(await conn.retry.call_with_retry(lambda: self._exchange(conn, calls, wait),
                                                     lambda _error: conn.disconnect()))

    async def _cluster_call(self, call: "_Call", slots: asyncio.Semaphore, wait: bool) -> Any:
        """One race's script call on a cluster (redis-py routes it, following redirections); with ``wait``
        (a call of moves, replica acks on) then a WAIT on the race's master, which must be the node the
        slot table named before the call: had it changed, the write may have gone to the old master."""
        async with slots:
            if not wait or call.reader is not None:
                return await call.script(keys=call.keys, args=call.args)
            node = self.redis.get_node_from_key(call.keys[0])
            result = await call.script(keys=call.keys, args=call.args)
            await self.replicas.confirm(self.redis, call.keys[0], node)
            return result

    async def _exchange(self, conn: Any, calls: list[_Call], wait: bool = False) -> list[Any]:
        """One write of every call, then their replies in order (a call Redis has no script for is
        loaded and sent again), within :data:`EXCHANGE_TIMEOUT`. With ``wait``, the WAIT for a replica
        goes in the same write, after the calls: no round trip more; the moves of a call hear
        :class:`~server.store.replicas.NotReplicated` if it found none.

        Why not redis-py's pipeline: for a batch of a few moves a race, its per-command packing, per-flush
        SCRIPT EXISTS round trip and pool checkout cost more than the moves' own checks (the flush was
        about a sixth of the server's time in a cProfile of bench/race_load.py). The commands' bytes are built here from cached pieces (a
        key's RESP bulk string is the same every move), through the same connection, parser and retry.
        """
        try:
            async with asyncio.timeout(EXCHANGE_TIMEOUT):
                packed = b"".join(_evalsha(c) for c in calls)
                await conn.send_packed_command(packed + self.replicas.wait_packed if wait else packed,
                                               check_health=False)
                results: list[Any] = []
                for _call in calls:
                    results.append(await _reply(conn))
                replicas = await _reply(conn) if wait else None
        except TimeoutError:  # redis-py's error: its retry reconnects, and the callers hear "unavailable"
            raise RedisTimeoutError(f"Redis did not answer a round trip of moves within {EXCHANGE_TIMEOUT} s") from None
        reloaded = False
        for i, call in enumerate(calls):
            if results[i] is None:  # Redis forgot the script (flushed, restarted): loaded again by redis-py
                reloaded = True
                try:
                    results[i] = await call.script(keys=call.keys, args=call.args)
                except ResponseError as exc:
                    results[i] = exc
        if wait:
            try:
                if reloaded:  # those calls went on another connection: a WAIT now covers them too
                    await self.replicas.confirm(self.redis, calls[0].keys[0])
                else:
                    self.replicas.check(replicas)
            except RedisError as exc:  # no replica in time, or Redis refused the WAIT: the moves are unsure
                results = [exc if call.reader is None else result for call, result in zip(calls, results)]
        return results

    async def _flush(self, lane: "_Lane", linger: float = 0.0) -> None:
        try:
            if linger:
                self._lingering = True
                try:
                    await asyncio.sleep(linger)
                finally:
                    self._lingering = False
            while self._pending or self._reads:
                batch, self._pending = self._pending, {}
                reads, self._reads = self._reads, []
                started = time.perf_counter()
                try:
                    calls = (self._calls(batch) if batch else []) + reads
                    results = await self._round_trip(calls, lane, bool(batch))
                except BaseException as exc:  # the round trip failed: every caller hears it
                    error = exc if isinstance(exc, Exception) else ConnectionError(repr(exc))
                    _fail(batch, reads, error)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                if self.timer is not None and batch:
                    self.timer("moves", time.perf_counter() - started)
                for call, result in zip(calls, results):
                    call.settle(result)
        finally:
            self._lane_free(lane)

    def _lane_ended(self, task: "asyncio.Task[None]") -> None:
        """A lane's task is over; if it was cancelled before it ever ran, its ``finally`` never did."""
        for lane in self._lanes:
            if lane.task is task:
                self._lane_free(lane)

    def _lane_free(self, lane: "_Lane") -> None:
        lane.task = None
        self._idle.append(lane)
        if (self._pending or self._reads) and len(self._idle) == LANES:
            # Cancelled (the server is stopping) with moves not sent, and no lane left to send them:
            # their callers hear it now rather than never.
            pending, self._pending = self._pending, {}
            reads, self._reads = self._reads, []
            _fail(pending, reads, ConnectionError("not sent: the server is stopping"))


class _Lane:
    """One flusher: its task while it runs, and its own pooled connection (single Redis), taken at its
    first flush and kept (closing the client closes it)."""

    __slots__ = ("task", "conn")

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.conn: Any = None


async def _reply(conn: Any) -> Any:
    """The next reply on ``conn``: None for a script Redis does not have, the error Redis answered."""
    try:
        return await conn.read_response()
    except NoScriptError:
        return None
    except ResponseError as exc:
        return exc


def _bulk(value: str) -> bytes:
    """A RESP bulk string."""
    data = value.encode()
    return b"$%d\r\n%s\r\n" % (len(data), data)


class _RaceKeys:
    """A race's keys as moves.lua takes them, and as RESP bulk strings: the same in every flush."""

    __slots__ = ("_keys", "names", "bulk", "_seats")

    def __init__(self, race: str) -> None:
        k = self._keys = Keys(race)
        self.names = [k.meta, k.progress, k.history, k.tick, k.listening]
        self.bulk = b"".join(_bulk(name) for name in self.names)
        self._seats: dict[int, tuple[list[str], bytes]] = {}

    def seat(self, seat: int) -> tuple[list[str], bytes]:
        """A seat's player and log keys, and their bulk strings."""
        got = self._seats.get(seat)
        if got is None:
            names = [self._keys.player(seat), self._keys.log(seat)]
            got = self._seats[seat] = (names, b"".join(_bulk(name) for name in names))
        return got


class _KeyCache:
    """The keys of the races moving lately (forgotten all at once past :data:`KEY_CACHE_RACES`)."""

    __slots__ = ("_races",)

    def __init__(self) -> None:
        self._races: dict[str, _RaceKeys] = {}

    def of(self, race: str) -> _RaceKeys:
        got = self._races.get(race)
        if got is None:
            if len(self._races) >= KEY_CACHE_RACES:
                self._races.clear()
            got = self._races[race] = _RaceKeys(race)
        return got


class _Call:
    """One script call of a round trip: its script, its keys (and their RESP bulk strings) and args, and
    who waits for its reply: the moves in reply order (moves.lua), or the one future of a read."""

    __slots__ = ("script", "keys", "bulk", "args", "items", "reader")

    def __init__(self, script: Any, keys: list[str], bulk: bytes, args: list[Any], items: list[_Item],
                 reader: "asyncio.Future[Any] | None" = None) -> None:
        self.script, self.keys, self.bulk, self.args, self.items = script, keys, bulk, args, items
        self.reader = reader

    def settle(self, result: Any) -> None:
        """Hand the call's reply (or the error Redis answered) to whoever waits for it."""
        if self.reader is not None:
            _answer(self.reader, None, result)
            return
        for i, (_, _, fut, then) in enumerate(self.items):
            _answer(fut, then, result if isinstance(result, BaseException) else _decoded(result[i]))


def _decoded(reply: Any) -> CommitResult | StoreError:
    """One move's reply: its result, or the refusal to raise."""
    try:
        return decode_commit(reply)
    except StoreError as exc:
        return exc


def _fail(batch: dict[str, list[_Item]], reads: list[_Call], error: BaseException) -> None:
    """Every move of ``batch`` and every read of ``reads`` that is still waiting hears ``error``."""
    for items in batch.values():
        for _, _, fut, then in items:
            _answer(fut, then, error)
    for call in reads:
        if call.reader is not None:
            _answer(call.reader, None, error)


def _answer(fut: "asyncio.Future[Any]", then: Settled | None, outcome: Any) -> None:
    """``outcome`` (a result, or an exception to raise) into ``fut`` unless it is done already; then
    ``then(fut)``, if any. What ``then`` raises goes to the loop's handler, never into the lane: the other
    moves of the round trip are still answered."""
    if not fut.done():
        if isinstance(outcome, BaseException):
            fut.set_exception(outcome)
        else:
            fut.set_result(outcome)
    if then is None:
        return
    try:
        then(fut)
    except Exception as exc:
        fut.get_loop().call_exception_handler({"message": "a move's callback failed", "exception": exc,
                                               "future": fut})


def _evalsha(call: _Call) -> bytes:
    """``EVALSHA sha numkeys keys... args...`` as RESP (args: bytes, or whole numbers)."""
    sha = call.script.sha
    nkeys = str(len(call.keys)).encode()
    parts = [b"*%d\r\n$7\r\nEVALSHA\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n%s" % (
        3 + len(call.keys) + len(call.args), len(sha), sha.encode(), len(nkeys), nkeys, call.bulk)]
    for arg in call.args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def _pack_list(packed_items: list[bytes]) -> bytes:
    """A msgpack array of already packed items (no decode and re-encode)."""
    n = len(packed_items)
    head = bytes([0x90 | n]) if n < 16 else (b"\xdc" + n.to_bytes(2, "big") if n < 65536 else
                                             b"\xdd" + n.to_bytes(4, "big"))
    return head + b"".join(packed_items)
