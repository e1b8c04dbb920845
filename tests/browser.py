"""Debian's headless Chromium through its driver, for the tests that open a page we ship in a real browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def chrome(download_dir: Path, width: int = 1400, height: int = 900) -> webdriver.Chrome:
    """Headless Chromium with a `width` × `height` window that downloads into `download_dir`; the test skips, saying
    why, where Chromium or its driver is not installed (.ci/run installs both, so CI runs it)."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.is_file()]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver, as .ci/run does)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": str(download_dir), "download.prompt_for_download": False})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(download_dir)})
    return driver
