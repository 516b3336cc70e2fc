# A loading script (stand-in): hubwatch never runs it.
import datasets
