#!/usr/bin/python3
"""The Python pipelines of benchmarks/bench-python.py, as a practitioner would write them with OpenCV-Python and ZeroMQ.
Each prints one JSON line per frame, in frame order, on standard output, and exits after the last frame. Every process
of a pipeline is a descendant of this one and is waited for, so os.wait4 of this process counts all their CPU.

  pipelines.py imagezmq --source DIR|VIDEO --frames N --model M [--reduced]
      imagezmq 1.2.0 (REQ/REP): a sender process reads each JPEG file's bytes (untouched; files in name order, looped;
      a video instead is read with cv2.VideoCapture and each frame encoded with cv2.imencode at quality 85, as
      Facewire's capture node does) and sends them with ImageSender.send_jpg (a JSON part with the frame number, then the JPEG), waiting for the
      reply; this process is the ImageHub: recv_jpg, decode and detect (compare/yunet.py), write the line, then
      send_reply(b"OK"). One hub, so detection runs on one core at a time.
  pipelines.py pool --source DIR|VIDEO --frames N --model M [--workers 2] [--reduced]
      A multiprocessing pool over ZeroMQ (zguide's ventilator / workers / sink): a sender process reads the frames
      as above and PUSHes [seq, JPEG]; K worker processes (spawned, OpenCV at one thread each) PULL, decode, detect and
      PUSH [seq, JSON line]; this process is the sink: it PULLs, puts the lines back in frame order and writes them.
      High-water marks of 2 on the frame sockets keep the sender from running far ahead. The workers say hello to the
      sink once their model is loaded; the sender starts only after every hello.

--reduced decodes with IMREAD_REDUCED_COLOR_2 (DCT-domain half scale, as Facewire's decoder does for 640-px frames)
instead of a full decode plus INTER_AREA resize: the variant a careful practitioner would find.
"""
import argparse
import glob
import multiprocessing
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import lifeline  # noqa: E402  (benchmarks/lifeline.py)


JPEG_QUALITY = 85  # what Facewire's capture node encodes video frames at (`--quality`, default 85)


class Frames:
    """What a sender sends: from a folder, each .jpg file's bytes as they are (in name order, looped); from a video
    file, each frame read with cv2.VideoCapture (the video opened again at its end) and encoded with cv2.imencode at
    JPEG_QUALITY, as Facewire's capture node does with a video."""

    def __init__(self, source):
        self.source, self.video = source, None
        if os.path.isdir(source):
            self.files = sorted(glob.glob(os.path.join(source, "*.jpg")))
            if not self.files:
                sys.exit(f"no .jpg files in {source}")
        else:
            self.files = None
            self._open()

    def _open(self):
        import cv2

        self.video = cv2.VideoCapture(self.source)
        if not self.video.isOpened():
            sys.exit(f"cannot open {self.source} as a folder of JPEGs or a video")

    def jpeg(self, seq):
        if self.files:
            with open(self.files[seq % len(self.files)], "rb") as handle:
                return handle.read()
        import cv2

        ok, image = self.video.read()
        if not ok:
            self.video.release()
            self._open()
            ok, image = self.video.read()
        return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])[1].tobytes()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def name_process(name):
    """Sets this process's name (/proc/PID/comm), which bench-python.py's per-process breakdown reads."""
    import ctypes

    ctypes.CDLL(None).prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME


def write(line):
    out = sys.stdout.buffer
    out.write(line + b"\n")
    out.flush()


# MARK: - imagezmq


def imagezmq_sender(endpoint, source, frames):
    import imagezmq

    name_process("sender")
    sender = imagezmq.ImageSender(connect_to=endpoint)
    reader = Frames(source)
    for seq in range(frames):
        sender.send_jpg(str(seq), reader.jpeg(seq))
    sender.close()


def run_imagezmq(args, context):
    import imagezmq
    from yunet import YuNet

    name_process("hub")
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    hub = imagezmq.ImageHub(open_port=endpoint)
    sender = context.Process(target=imagezmq_sender, args=(endpoint, args.source, args.frames))
    detector = YuNet(args.model, args.reduced, args.runtime)
    sender.start()
    for _ in range(args.frames):
        name, jpeg = hub.recv_jpg()
        write(detector.line(int(name), jpeg).encode())
        hub.send_reply(b"OK")
    sender.join()
    hub.close()
    return sender.exitcode


# MARK: - multiprocessing pool over ZeroMQ


def pool_sender(endpoint, source, frames, go):
    import zmq

    name_process("sender")
    context = zmq.Context()
    push = context.socket(zmq.PUSH)
    push.sndhwm = 2
    push.bind(endpoint)
    reader = Frames(source)
    go.wait()
    for seq in range(frames):
        push.send_multipart([seq.to_bytes(8, "little"), reader.jpeg(seq)], copy=False)
    push.close(linger=-1)
    context.term()


def pool_worker(frames_endpoint, sink_endpoint, model, reduced, runtime, stop):
    import zmq
    from yunet import YuNet

    name_process("worker")
    detector = YuNet(model, reduced, runtime)
    context = zmq.Context()
    pull = context.socket(zmq.PULL)
    pull.rcvhwm = 2
    pull.connect(frames_endpoint)
    push = context.socket(zmq.PUSH)
    push.connect(sink_endpoint)
    push.send_multipart([b"hello", b""])
    poller = zmq.Poller()
    poller.register(pull, zmq.POLLIN)
    while not stop.is_set():
        if not poller.poll(100):
            continue
        seq, jpeg = pull.recv_multipart(copy=False)
        number = int.from_bytes(seq.bytes, "little")
        push.send_multipart([seq.bytes, detector.line(number, jpeg.buffer).encode()])
    pull.close(linger=0)
    push.close(linger=1000)
    context.term()


def run_pool(args, context):
    import zmq

    name_process("sink")
    zcontext = zmq.Context()
    sink = zcontext.socket(zmq.PULL)
    sink_endpoint = f"tcp://127.0.0.1:{sink.bind_to_random_port('tcp://127.0.0.1')}"
    frames_endpoint = f"tcp://127.0.0.1:{free_port()}"
    go, stop = context.Event(), context.Event()
    sender = context.Process(target=pool_sender, args=(frames_endpoint, args.source, args.frames, go))
    sender.start()
    worker_args = (frames_endpoint, sink_endpoint, args.model, args.reduced, args.runtime, stop)
    workers = [context.Process(target=pool_worker, args=worker_args) for _ in range(args.workers)]
    for worker in workers:
        worker.start()
    hellos = 0
    while hellos < args.workers:
        if sink.recv_multipart()[0] == b"hello":
            hellos += 1
    go.set()
    pending, next_seq = {}, 0
    while next_seq < args.frames:
        seq, line = sink.recv_multipart()
        pending[int.from_bytes(seq, "little")] = line
        while next_seq in pending:
            write(pending.pop(next_seq))
            next_seq += 1
    stop.set()
    for process in [sender] + workers:
        process.join()
    sink.close(linger=0)
    zcontext.term()
    return max(abs(p.exitcode or 0) for p in [sender] + workers)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pipeline", choices=["imagezmq", "pool"])
    parser.add_argument("--source", required=True)
    parser.add_argument("--frames", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reduced", action="store_true")
    parser.add_argument("--runtime", choices=["opencv", "openvino"], default="opencv")
    args = parser.parse_args()
    lifeline.watch_parent()  # a pipeline ends with the benchmark that started it
    context = multiprocessing.get_context("spawn")
    status = run_imagezmq(args, context) if args.pipeline == "imagezmq" else run_pool(args, context)
    sys.exit(1 if status else 0)


if __name__ == "__main__":
    main()
