"""placeholder"""
def main(argv=None):
    return 0
def run_calibrate_query(obj):
    return {}
