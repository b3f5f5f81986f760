from environment.evaluation.modeled.selftest import self_test


def test_self_test_passes_with_the_exact_vector_add_counts():
    ok, detail = self_test()
    assert ok, detail
    assert detail == ("modeled-time self-test passed: 1M fp32 vector add = 12,582,912 bytes, "
                      "1 launch of 256 programs at BLOCK 4096")
