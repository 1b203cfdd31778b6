import os

from hypothesis import settings

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=15, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
