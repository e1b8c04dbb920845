"""Take docs/annotation.png: the annotation page of a sample in headless Chromium (Debian's chromium and
chromedriver, via selenium), after two verdicts so the progress bar shows.

Run from the project root after a run with annotation.sample > 0:
    .venv/bin/python docs/annotation_screenshot.py results/annotation/sample/fr.html
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains

ROOT = Path(__file__).resolve().parents[1]


def main(page: Path) -> None:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as profile:  # a fresh profile: no progress of an earlier session
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,640",
                         "--hide-scrollbars", f"--user-data-dir={profile}"):
            options.add_argument(argument)
        driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
        try:
            driver.get(page.resolve().as_uri())
            ActionChains(driver).send_keys("d").send_keys("d").perform()
            driver.save_screenshot(str(ROOT / "docs" / "annotation.png"))
        finally:
            driver.quit()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
