"""``python -m quotagov_tools.deploy.checks [TEMPLATE] [--events DIR]`` (see :mod:`.run`)."""

import sys

from quotagov_tools.deploy.checks.run import main

if __name__ == "__main__":
    sys.exit(main())
