"""The 3-D web viewer and the animations: geometry checked against forward kinematics and the frame table, the page
checked in a real headless Chromium (the robot is drawn, a pose change moves pixels, no request leaves localhost)."""

from __future__ import annotations

import io
import json
import shutil
import time

import numpy as np
import pytest
from hypothesis import given, strategies as st

import robodyn as rd
from robodyn.errors import InputError
from robodyn.viewer import Viewer, animate, link_segments, view
from tests.support.random_robots import random_robot


@given(st.integers(0, 10_000), st.booleans())
def test_link_segments_follow_the_frame_table(seed, tree):
    robot = random_robot(seed, tree=tree, fixed=True)
    q = np.random.default_rng(seed).uniform(-2, 2, (3, robot.n))
    points = link_segments(robot, q)
    T = rd.forward_kinematics(robot, q)
    assert points.shape == (3, robot.nf, 4, 3)
    np.testing.assert_allclose(points[..., 3, :], T[..., :3, 3], rtol=0, atol=1e-12)
    parent = robot.antecedent - 1
    base = np.where((parent >= 0)[:, None], T[..., :3, 3][:, np.maximum(parent, 0)], 0.0)
    np.testing.assert_allclose(points[..., 0, :], base, rtol=0, atol=1e-12)
    r = np.tile(np.asarray(robot.r, float), (3, 1))
    r[:, robot.joint_frames] += q * (robot.sigma[robot.joint_frames] == 1)
    lengths = np.linalg.norm(np.diff(points, axis=-2), axis=-1)
    np.testing.assert_allclose(lengths[..., 0], np.abs(robot.b) + 0 * r, atol=1e-12)
    np.testing.assert_allclose(lengths[..., 1], np.tile(np.abs(robot.d), (3, 1)), atol=1e-12)
    np.testing.assert_allclose(lengths[..., 2], np.abs(r), atol=1e-12)
    for k in range(3):  # a batch equals its samples
        np.testing.assert_array_equal(link_segments(robot, q[k]), points[k])


def test_link_segments_reject_bad_states():
    robot = rd.load("rx90")
    with pytest.raises(InputError, match="expected"):
        link_segments(robot, np.zeros(5))
    with pytest.raises(InputError):
        link_segments(robot, np.full(6, np.nan))


@pytest.fixture
def rx90_viewer():
    with view(rd.load("rx90")) as v:
        yield v


def test_viewer_shows_and_plays(rx90_viewer):
    v = rx90_viewer
    assert v.url.startswith("http://127.0.0.1:")
    v.show(np.full(6, 0.3))
    np.testing.assert_array_equal(v.q, np.full(6, 0.3))
    assert [round(s.value, 12) for s in v._sliders] == [0.3] * 6
    t = np.linspace(0, 0.05, 4)
    q = np.outer(t, np.ones(6))
    meas = np.ones((4, 6))
    v.play(t, q, tau_measured=meas, tau_predicted=meas * 1.1, speed=10)
    np.testing.assert_array_equal(v.q, q[-1])
    colours = v._error_colours(t, meas, meas * 1.1)
    # 10 % error is 40 % of the way from green to red
    np.testing.assert_allclose(colours[0, 0], [60 + 0.4 * 160, 160 - 0.4 * 110, 90 - 0.4 * 50])


@pytest.mark.parametrize("kwargs, match", [
    (dict(t=[0, 1], q=np.zeros((3, 6))), "expected"),
    (dict(t=[1, 0], q=np.zeros((2, 6))), "non-decreasing"),
    (dict(t=[0, 1], q=np.zeros((2, 6)), speed=0), "speed"),
    (dict(t=[0, 1], q=np.zeros((2, 6)), tau_measured=np.zeros((2, 6))), "both"),
    (dict(t=[0, 1], q=np.zeros((2, 6)), tau_measured=np.zeros((2, 6)), tau_predicted=np.zeros((2, 5))), "tau_predicted"),
])
def test_viewer_play_rejects_bad_input(rx90_viewer, kwargs, match):
    with pytest.raises(InputError, match=match):
        rx90_viewer.play(**kwargs)


def test_viewer_rejects_bad_configuration():
    with pytest.raises(InputError, match="one entry per joint"):
        Viewer(rd.load("rx90"), np.zeros(3))


def test_animate_writes_a_gif(tmp_path):
    robot = rd.load("planar2r")
    t = np.linspace(0, 1, 20)
    q = np.stack([np.sin(t), np.cos(t)], axis=-1)
    out = animate(robot, t, q, tmp_path / "motion.gif", fps=5, title="a $\\frac{$ name")
    data = out.read_bytes()
    assert data[:6] in (b"GIF87a", b"GIF89a")
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        assert im.n_frames == 6


@pytest.mark.parametrize("name, kwargs, match", [
    ("x.txt", {}, "gif"),
    ("x.gif", dict(fps=0), "fps"),
    ("x.gif", dict(fps=1000), "frames"),
])
def test_animate_rejects_bad_input(tmp_path, name, kwargs, match):
    t = np.linspace(0, 100, 5)
    with pytest.raises(InputError, match=match):
        animate(rd.load("planar2r"), t, np.zeros((5, 2)), tmp_path / name, **kwargs)
    assert list(tmp_path.iterdir()) == []


def _chrome():
    webdriver = pytest.importorskip("selenium.webdriver", reason="the browser test needs selenium (test extra)")
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (binary and driver):
        pytest.skip("no Chromium/chromedriver installed (.ci/run installs the distribution's packages)")
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=800,600",
                "--enable-unsafe-swiftshader", "--use-angle=swiftshader"):
        opts.add_argument(arg)
    opts.binary_location = binary
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=opts)


def _screenshot(browser, timeout=120.0) -> np.ndarray:
    """The page as RGB pixels.  ChromeDriver gives the renderer 10 s per capture, which a software-rendered scene
    on loaded cores can miss (seen with the UR5's meshes while other tests compiled): the capture is asked again
    until ``timeout``."""
    from PIL import Image
    from selenium.common.exceptions import TimeoutException

    deadline = time.monotonic() + timeout
    while True:
        try:
            png = browser.get_screenshot_as_png()
            break
        except TimeoutException:
            if time.monotonic() > deadline:
                raise
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


def _wait_for_canvas(browser, timeout=60.0):
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if browser.find_elements(By.TAG_NAME, "canvas"):
            return
        time.sleep(0.25)
    raise AssertionError("the viewer page drew no canvas")


def test_viewer_page_in_a_real_browser():
    browser = _chrome()
    try:
        with view(rd.load("rx90")) as v:
            browser.get(v.url)
            _wait_for_canvas(browser)
            time.sleep(4)  # first frames: the scene arrives over the websocket
            before = _screenshot(browser)
            assert before.std() > 5, "the page is blank"
            v.show(np.array([1.0, -0.5, 0.8, 0.3, 1.0, 0.0]))
            time.sleep(3)
            after = _screenshot(browser)
            moved = np.abs(after - before).max(axis=-1) > 30
            assert moved.sum() > 500, "a pose change moved no pixels"
            hosts = set()
            for entry in browser.get_log("performance"):
                message = json.loads(entry["message"])["message"]
                if message["method"] == "Network.requestWillBeSent":
                    url = message["params"]["request"]["url"]
                    if url.startswith(("http:", "https:", "ws:", "wss:")):
                        hosts.add(url.split("/")[2].rsplit(":", 1)[0])
            assert hosts == {"127.0.0.1"}, f"requests left localhost: {hosts}"
    finally:
        browser.quit()


def test_cli_view_serves_and_animates(tmp_path):
    from typer.testing import CliRunner

    from robodyn.cli import app

    runner = CliRunner()
    served = runner.invoke(app, ["view", "rx90", "--seconds", "0.2"])
    assert served.exit_code == 0, served.output
    assert "http://127.0.0.1:" in served.output
    out = tmp_path / "m.gif"
    made = runner.invoke(app, ["view", "planar2r", "--animate", str(out), "--to", "1,1", "--duration", "0.2"])
    assert made.exit_code == 0, made.output
    assert out.read_bytes()[:3] == b"GIF"
    for args in (["--seconds", "nan"], ["--port", "70000"], ["--animate", str(tmp_path / "x.txt")],
                 ["--animate", str(tmp_path / "y.gif"), "--duration", "1e300"]):
        bad = runner.invoke(app, ["view", "planar2r", *args])
        assert bad.exit_code == 2, (args, bad.output)
        assert len(bad.output.strip().splitlines()) == 1, bad.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.gif"]
