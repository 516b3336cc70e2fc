# Model configuration
MODEL_NAME = "microsoft/Phi-3.5-mini-instruct"
MODEL_REVISION = "main"
OUTPUT_DIR = "./fine_tuned_phi_habits"
