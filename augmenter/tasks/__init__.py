"""Task data in published formats (DSTC11 Track 5 dialogues)."""
