from transformers import AutoModelForImageTextToText, AutoProcessor, BitsAndBytesConfig

import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))
from env_utils import load_hf_token  # noqa: E402


MODEL_ID = "google/medgemma-4b-it"
MODEL_REVISION = "290cda5eeccbee130f987c4ad74a59ae6f196408"
