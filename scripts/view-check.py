#!/usr/bin/env python3
"""Opens Facewire's live view in headless Chromium (Selenium) and reports what the page drew, as JSON on stdout.

Waits until a tile has drawn at least --frames frames with a tracked face, then reads the page's own data (the
tiles' data attributes, the event list, window.facewire.drawn: every drawn frame's frame seq, result seq and boxes),
saves a screenshot at laptop width and one at phone width, and checks that the phone layout does not scroll
sideways. Exits 0 when it saw what it waited for, 1 otherwise (the JSON says what was missing), 2 when the browser
cannot run here.

Needs Debian's chromium, chromium-driver and python3-selenium (scripts/setup.sh --with-browser installs them).

    python3 scripts/view-check.py --url http://127.0.0.1:8080/ --screenshot view.png [--frames 20] [--timeout 60]
"""
import argparse
import json
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--screenshot", help="PNG at 1280x900")
    parser.add_argument("--phone-screenshot", help="PNG at 390x844")
    parser.add_argument("--frames", type=int, default=20, help="frames with a tracked face to wait for")
    parser.add_argument("--events", type=int, default=1, help="events to wait for")
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        print(json.dumps({"error": f"selenium missing: {error}"}))
        return 2
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    try:
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as error:  # noqa: BLE001 - any failure to start the browser is "cannot run here"
        print(json.dumps({"error": f"cannot start chromium: {error}"}))
        return 2
    report = {"url": args.url}
    try:
        driver.set_page_load_timeout(args.timeout)
        driver.get(args.url)
        deadline = time.monotonic() + args.timeout
        waited = "frames"
        while time.monotonic() < deadline:
            progress = driver.execute_script(
                "const v = window.facewire; if (!v) return null;"
                "return {withFaces: v.drawn.filter(d => d.faces.some(f => f.id)).length, events: v.events};")
            if progress and progress["withFaces"] >= args.frames and progress["events"] >= args.events:
                waited = None
                break
            time.sleep(0.25)
        time.sleep(0.5)  # a status push, and one more frame
        report.update(driver.execute_script("""
            const v = window.facewire || {drawn: [], frames: 0, mismatches: 0, events: 0};
            const tiles = [...document.querySelectorAll('.tile')].map(t => ({
              stream: t.dataset.stream, epoch: t.dataset.epoch, frameSeq: t.dataset.frameSeq, resultSeq: t.dataset.resultSeq,
              trackingIds: (t.dataset.trackingIds || '').split(' ').filter(x => x), processed: t.dataset.processed,
              dropped: t.dataset.dropped, stats: t.querySelector('.stats').innerText, canvas: [t.querySelector('canvas').width,
              t.querySelector('canvas').height]}));
            const events = [...document.querySelectorAll('#events li')].map(li => ({kind: li.dataset.kind,
              stream: li.dataset.stream, trackingID: Number(li.dataset.trackingId), text: li.innerText}));
            return {tiles, events, drawn: v.drawn, frames: v.frames, mismatches: v.mismatches, connections: v.connections,
                    connection: document.getElementById('connection').textContent};
        """))
        report["waitedFor"] = waited
        if args.screenshot:
            driver.save_screenshot(args.screenshot)
        driver.set_window_size(390, 844)
        time.sleep(0.5)
        report["phoneOverflow"] = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        if args.phone_screenshot:
            driver.save_screenshot(args.phone_screenshot)
        logs = []
        try:
            logs = [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
        except Exception:  # noqa: BLE001 - not every driver keeps logs
            pass
        report["consoleErrors"] = logs
    finally:
        driver.quit()
    print(json.dumps(report))
    return 0 if report.get("waitedFor") is None else 1


if __name__ == "__main__":
    sys.exit(main())
