import os
import sys

# The SDK modules sit one level up: import them as an extension host does (PYTHONPATH=sdk/python).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
