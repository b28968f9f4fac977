//! Position-bias families: bucket functions, grids, and their gradients.
use at5::position::{check_t5_config, t5_bucket};

#[test]
fn t5_buckets_match_the_spot_values() {
    let spots = [
        (0, 0),
        (-1, 1),
        (-7, 7),
        (-8, 8),
        (-20, 10),
        (-127, 15),
        (-1000, 15),
        (1, 17),
        (8, 24),
        (20, 26),
        (128, 31),
    ];
    for (n, b) in spots {
        assert_eq!(t5_bucket(n, 32, 128, true), b, "n = {n}");
    }
}

#[test]
fn t5_buckets_stay_in_range_and_grow_with_distance() {
    for nb in [4, 8, 16, 32, 64, 128] {
        for md in [2, 8, 20, 50, 128, 500] {
            for bidir in [true, false] {
                if check_t5_config(nb, md, bidir).is_err() {
                    continue;
                }
                let half = if bidir { nb / 2 } else { nb };
                for sign in [-1i64, 1] {
                    let mut prev = None;
                    for d in 0..3 * md as i64 {
                        let b = t5_bucket(sign * d, nb, md, bidir);
                        assert!(b < nb, "bucket {b} out of range for {nb}/{md}/{bidir}");
                        if bidir && d > 0 {
                            // Keys after the query use the upper half, before it the lower half.
                            assert_eq!(b >= half, sign > 0, "n = {}", sign * d);
                        }
                        if let Some(p) = prev {
                            assert!(
                                b >= p,
                                "not monotone at n = {} ({nb}/{md}/{bidir})",
                                sign * d
                            );
                        }
                        prev = Some(b);
                    }
                }
            }
        }
    }
}

#[test]
fn t5_rejects_more_exact_buckets_than_max_distance() {
    let err = check_t5_config(64, 10, true).unwrap_err();
    assert!(err.contains("max_distance"), "{err}");
    assert!(check_t5_config(64, 20, true).is_ok());
    assert!(check_t5_config(2, 20, true).is_err());
}
