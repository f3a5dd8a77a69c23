"""python3 -m facewire: prints a collector's stream as JSON Lines, as `facewire --role tail` does (SPEC 12)."""
import argparse
import sys

from .client import Client, FaceAppeared, FaceLeft, Frame, Statistics, StreamEnded, TrackingReset


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m facewire", description=__doc__)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--collector", help="the collector's control endpoint, e.g. tcp://collector:5556")
    where.add_argument("--publish", help="the results endpoint directly")
    parser.add_argument("--stream", action="append", default=[], help="only this stream (repeatable)")
    parser.add_argument("--events", action="store_true", help="also face events, resets and stream ends")
    parser.add_argument("--statistics", action="store_true", help="also statistics windows")
    parser.add_argument("--exit-on-end", action="store_true", help="exit when a stream ends")
    parser.add_argument("--curve-secret-key", help="this client's .key file (facewire keygen)")
    parser.add_argument("--curve-server-key", help="the collector's .pub file")
    args = parser.parse_args(argv)
    client = Client(collector=args.collector, publish=args.publish, streams=args.stream,
                    curve_secret_key=args.curve_secret_key, curve_server_key=args.curve_server_key,
                    on_subscribed=lambda: print("facewire client subscribed", file=sys.stderr, flush=True))
    try:
        for item in client:
            wanted = isinstance(item, Frame) or (args.statistics and isinstance(item, Statistics)) or (
                args.events and isinstance(item, (FaceAppeared, FaceLeft, TrackingReset, StreamEnded)))
            if wanted:
                sys.stdout.write(item.json() + "\n")
                sys.stdout.flush()
            if args.exit_on_end and isinstance(item, StreamEnded):
                return 0
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
