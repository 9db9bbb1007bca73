import sys

from lint_rules.cli import main

sys.exit(main())
