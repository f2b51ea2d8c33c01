"""An event model of Sprout's feedback timing on CoCo-Beholder's one-flow path (README.md, the
datagram validation table): what the forward rate becomes when the forecasts reach the sender
as Pantheon's `sproutbt2` delivers them, against ccbench's fixed 20 ms grid.

Pantheon runs `sproutbt2` at both ends (github.com/keithw/alfalfa `src/examples/sproutbt2.cc`,
with Pantheon's `src/wrappers/patches/sprout.patch`): each end sends data under its own
window, and a receiver's forecast rides on the first packet of its own next burst once its
20 ms tick has changed (`src/network/sproutconn.cc` `send`), counting what arrived by then
(`src/sprout/receiver.cc` `forecast`, `packet_count`; `src/network/network.cc` sequence
numbers of payload + 50 bytes, the 10 ms / 65535-byte throwaway window). Everything else is
as the reference: integer-ms clocks, the sender's queue estimate and tick decrements, the
window's do-while burst with the last packet announcing 50 ms, heartbeats every 50 ms, one
received packet per loop. The forecast itself is held at ccbench's saturated value (the
link carries far more than the model's 1000 packets/s ceiling), so only timing differs.
Links: 100 Mbit/s each way counting whole frames (payload + 74 bytes), one-way X ms.

    python examples/studies/coco-beholder/sproutbt2_model.py 3,5,10,20 [ref|grid]

`ref`: both ends as above; `grid`: the receiver only reports, every 20 ms from its first
arrival (ccbench's `sprout`). Ten runs per X, the far end started 0.3 + k ms after the near
one (k = the run's offset), rate and OWD95 of the forward data over t = 2-10 s.
"""
import heapq
import math
import sys

COUNTS = [13, 30, 47, 64, 82, 100, 118, 135]  # ccbench's forecast of a saturated link, 1..8 ticks
UNIT, DATA, SEQ_EXTRA, WIRE_EXTRA, FORECAST_BYTES = 1400, 1400, 50, 74, 30
RATE_BPS, TICK, FALLBACK, REORDER_MS, CAP = 100e6, 20, 50, 10, 65535
OFFSETS = (0.0, 1.3, 3.7, 5.9, 7.1, 9.4, 11.9, 13.1, 15.3, 17.7)


class Events:
    def __init__(self):
        self.q, self.n = [], 0

    def push(self, t, kind, who, pkt=None):
        self.n += 1
        heapq.heappush(self.q, (t, self.n, kind, who, pkt))


class Link:
    """One direction: a 100 Mbit/s FIFO, then X ms and two more serialisations."""
    def __init__(self, ev, x_ms, dst):
        self.ev, self.x, self.dst, self.free = ev, x_ms, dst, 0.0

    def send(self, now, pkt):
        ser = pkt["wire"] * 8 / RATE_BPS * 1e3
        self.free = max(now, self.free) + ser
        self.ev.push(self.free + self.x + 2 * ser, "arrive", self.dst, pkt)


class End:
    """One sproutbt2: its receiver (forecast snapshot) and its sender (budget, bursts)."""
    def __init__(self, ev, attach):
        self.ev, self.attach = ev, attach
        self.next_seq, self.sendq = 0, []
        self.rx_time, self.rx_started, self.rq, self.tb = 0, False, [], 0
        self.cache_time, self.cache_count = None, 0
        self.local_fc, self.remote_time, self.ended = 0, 0, True
        self.queue, self.tick = 0, 0
        self.next_tx, self.wake_at, self.log = FALLBACK, None, []

    def advance(self, t):
        while self.rx_time + TICK < t:
            self.rx_time += TICK

    def forecast(self, t):
        self.advance(t)
        if self.cache_time != self.rx_time:
            self.cache_time = self.rx_time
            while self.rq and self.rq[0][0] < self.tb:
                heapq.heappop(self.rq)
            self.cache_count = self.tb + sum(n for _, n in self.rq)
        return self.cache_time, self.cache_count

    def update_queue(self, t):
        target = min(int((t - self.remote_time) // TICK), len(COUNTS) - 1)
        while self.tick < target:
            self.queue = max(0, self.queue - UNIT * COUNTS[self.tick])
            self.tick += 1

    def window(self, t):
        self.update_queue(t)
        hi = min(self.tick + 5, len(COUNTS) - 1)
        return max(0, UNIT * (COUNTS[hi] - COUNTS[self.tick]) - self.queue)

    def send(self, now, size, time_to_next):
        t = math.floor(now)
        fc = None
        if self.attach and self.ended:
            ft, count = self.forecast(t)
            if ft != self.local_fc:
                fc, self.local_fc = (ft, count), ft
        self.ended = time_to_next > 0
        payload = 2 + (FORECAST_BYTES if fc else 0) + size
        self.sendq.append((self.next_seq, t))
        while self.sendq[0][1] < t - REORDER_MS:
            self.sendq.pop(0)
        throwaway = min(CAP, self.next_seq - self.sendq[0][0])
        self.link.send(now, dict(seq=self.next_seq, tw=throwaway, len=payload,
                                 wire=payload + WIRE_EXTRA, fc=fc, sent=now))
        self.next_seq += payload + SEQ_EXTRA
        self.queue += payload
        self.update_queue(t)

    def take_forecast(self, t, fc):
        self.remote_time, self.tick = t, 0
        self.queue = self.next_seq - fc[1]
        self.update_queue(t)

    def receive(self, now, pkt):
        t = math.floor(now)
        if not self.rx_started:
            self.rx_time, self.rx_started = t, True
        self.advance(t)
        heapq.heappush(self.rq, (pkt["seq"], pkt["len"]))
        self.tb = max(self.tb, pkt["seq"] - pkt["tw"])
        self.log.append((now, pkt["wire"], now - pkt["sent"], pkt["len"]))
        if pkt["fc"] is not None:
            self.take_forecast(t, pkt["fc"])

    def loop(self, now):
        t = math.floor(now)
        budget = self.window(t)
        if budget > 0 or self.next_tx <= t:
            while True:
                size = min(DATA, budget)
                budget -= size
                self.send(now, size, 0 if budget > 0 else FALLBACK)
                if budget <= 0:
                    break
            self.next_tx = max(t + FALLBACK, self.next_tx)
        self.wake_at = now + min(max(self.next_tx - t, 0), 10)
        self.ev.push(self.wake_at, "wake", self)


def run(x_ms, mode, offset, dur=10000.0):
    ev = Events()
    near, far = End(ev, True), End(ev, mode == "ref")
    near.link, far.link = Link(ev, x_ms, far), Link(ev, x_ms, near)
    near.wake_at = 0.0
    ev.push(0.0, "wake", near)
    if mode == "ref":
        far.wake_at = 0.3 + offset
        ev.push(far.wake_at, "wake", far)
    while ev.q:
        now, _, kind, who, pkt = heapq.heappop(ev.q)
        if now > dur:
            break
        if kind == "wake" and now == who.wake_at:
            who.loop(now)
        elif kind == "report":  # grid: the far end reports and nothing else
            fc = far.forecast(math.floor(now))
            ev.push(now + x_ms, "forecast", near, fc)
            ev.push(now + TICK, "report", far)
        elif kind == "forecast":
            near.take_forecast(math.floor(now), pkt)
            near.loop(now)
        elif kind == "arrive":
            if mode == "grid" and who is far and not far.rx_started:
                ev.push(now + TICK, "report", far)
            who.receive(now, pkt)
            if mode == "ref" or who is near:
                who.loop(now)
    return summary(far.log)


def summary(log):
    log = [r for r in log if r[0] > 2000]
    span = log[-1][0] - log[0][0]
    owd = sorted(r[2] for r in log if r[3] > 100)
    return sum(r[1] for r in log) * 8 / span / 1e3, owd[int(0.95 * len(owd))]


def main():
    mode = sys.argv[2] if len(sys.argv) > 2 else "ref"
    for x in (float(v) for v in sys.argv[1].split(",")):
        rs = [run(x, mode, o) for o in OFFSETS]
        print(f"X = {x:g} ms, {mode}: rate Mbit/s " + " ".join(f"{r[0]:.2f}" for r in rs)
              + " | OWD95 ms " + " ".join(f"{r[1]:.2f}" for r in rs))


if __name__ == "__main__":
    main()
