#!/usr/bin/python3
"""Drives the web player of a running `longform serve` in Debian's chromium, headless, through
Selenium and chromium-driver, the way a user would: adds items from the library and by URL,
reorders one by dragging its handle, removes one, plays, seeks with the progress bar, pauses and
switches the route. After each step it asks the server's API whether the player did it.
Screenshots at desktop and phone widths go to --screenshots.

Usage: web_player_test.py --port PORT --pulse-route pulse:SINK --screenshots DIR
Exit status 0 when every check held; otherwise the failed check is printed.
"""
import argparse
import json
import os
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pulse-route", required=True)
    parser.add_argument("--screenshots", required=True)
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    os.makedirs(args.screenshots, exist_ok=True)

    def api(path):
        with urllib.request.urlopen(base + path, timeout=10) as response:
            return json.load(response)

    def wait_for(description, condition, timeout=10):
        deadline = time.time() + timeout
        while True:
            value = condition()
            if value:
                print(f"ok: {description}")
                return value
            if time.time() > deadline:
                raise AssertionError(f"{description}: not within {timeout} s (state: {json.dumps(api('/api/state'))[:600]})")
            time.sleep(0.1)

    def ids():
        return [item["id"] for item in api("/api/playlist")["items"]]

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        driver.get(base + "/")
        rows = wait_for("the library is listed", lambda: driver.find_elements(By.CSS_SELECTOR, "#tracks li") if len(driver.find_elements(By.CSS_SELECTOR, "#tracks li")) >= 3 else None)

        # Add every library track with its "+" button.
        for row in rows[:3]:
            row.find_element(By.CSS_SELECTOR, "button.add").click()
            time.sleep(0.1)
        wait_for("three items added from the library", lambda: len(ids()) == 3)
        wait_for("the page lists them", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#playlist li")) == 3)

        # Add a URL, then remove it with its ✕.
        driver.find_element(By.ID, "url").send_keys("http://127.0.0.1:9/radio.mp3")
        driver.find_element(By.CSS_SELECTOR, "#add-url button").click()
        wait_for("a URL added", lambda: any(item["location"] == "http://127.0.0.1:9/radio.mp3" for item in api("/api/playlist")["items"]))
        wait_for("the page lists four items", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#playlist li")) == 4)
        url_id = ids()[3]
        driver.find_element(By.CSS_SELECTOR, f'#playlist li[data-id="{url_id}"] button.remove').click()
        wait_for("the URL removed", lambda: url_id not in ids() and len(ids()) == 3)

        # Drag the third item's handle above the first.
        before = ids()
        wait_for("the page shows three items again", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#playlist li")) == 3)
        handle = driver.find_element(By.CSS_SELECTOR, f'#playlist li[data-id="{before[2]}"] .handle')
        first = driver.find_element(By.CSS_SELECTOR, f'#playlist li[data-id="{before[0]}"]')
        offset_y = first.location["y"] + 4 - handle.location["y"]
        ActionChains(driver).click_and_hold(handle).move_by_offset(0, offset_y // 2).move_by_offset(0, offset_y - offset_y // 2).release().perform()
        wait_for("the dragged item is first", lambda: ids() == [before[2], before[0], before[1]])

        # Play.
        driver.find_element(By.ID, "play-pause").click()
        wait_for("playing", lambda: api("/api/state")["playbackState"] == "playing")
        state = api("/api/state")
        title = next(item["displayTitle"] for item in state["playlist"] if item["id"] == state["currentId"])
        wait_for("the page shows the current item's title", lambda: driver.find_element(By.ID, "title").text == title)
        has_artwork = api("/api/now-playing")["hasArtwork"]
        wait_for("the artwork shows exactly when the item has some",
                 lambda: driver.find_element(By.ID, "artwork").is_displayed() == has_artwork
                 and driver.find_element(By.ID, "artwork-placeholder").is_displayed() != has_artwork)
        wait_for("the progress moves on the page", lambda: driver.find_element(By.ID, "elapsed").text not in ("", "0:00"), timeout=5)

        # Seek: click at three quarters of the progress bar.
        bar = driver.find_element(By.ID, "progress")
        duration = float(bar.get_attribute("max"))
        width = bar.size["width"]
        ActionChains(driver).move_to_element_with_offset(bar, int(width * 0.25), 0).click().perform()
        target = duration * 0.75
        wait_for(f"seeked near {target:.1f} s of {duration:.1f} s",
                 lambda: abs(api("/api/state").get("offset", 0) - target) < duration * 0.06 + 0.5)

        # Pause.
        driver.find_element(By.ID, "play-pause").click()
        wait_for("paused", lambda: api("/api/state")["playbackState"] == "paused")

        # Switch the route with the picker.
        wait_for("the picker offers PulseAudio", lambda: any(option.get_attribute("value") == args.pulse_route
                                                              for option in driver.find_elements(By.CSS_SELECTOR, "#route option")))
        Select(driver.find_element(By.ID, "route")).select_by_value(args.pulse_route)
        wait_for("the route switched", lambda: api("/api/routes")["current"] == args.pulse_route)
        driver.find_element(By.ID, "play-pause").click()
        wait_for("playing again, on PulseAudio", lambda: api("/api/state")["playbackState"] == "playing")

        time.sleep(0.5)
        desktop = os.path.join(args.screenshots, "web-player-desktop.png")
        driver.save_screenshot(desktop)
        driver.set_window_size(390, 844)
        time.sleep(0.5)
        phone = os.path.join(args.screenshots, "web-player-phone.png")
        driver.save_screenshot(phone)
        # At phone width nothing spills sideways.
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 0:
            raise AssertionError(f"the page is {overflow} px wider than a phone's screen")
        print(f"ok: screenshots {desktop} {phone}")
    except AssertionError as failure:
        print(f"FAILED: {failure}")
        driver.save_screenshot(os.path.join(args.screenshots, "web-player-failure.png"))
        return 1
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
