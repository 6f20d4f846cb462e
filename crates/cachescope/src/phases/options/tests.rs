use super::*;

#[test]
fn names_round_trip_and_lists_parse() {
    for m in Method::ALL {
        assert_eq!(Method::from_name(m.name()), Some(m));
        assert_eq!(m.name().parse::<Method>().unwrap(), m);
    }
    assert_eq!(
        Method::parse_list("setvector, wavelet,setvector").unwrap(),
        [Method::Setvector, Method::Wavelet]
    );
    assert_eq!(Method::parse_list("all").unwrap(), Method::ALL);
    let e = Method::parse_list("setvector,bbv").unwrap_err().to_string();
    assert!(e.contains("\"bbv\" is not one of setvector"), "{e}");
}

#[test]
fn k_parses_numbers_and_ranges() {
    assert_eq!(KChoice::parse("4").unwrap(), KChoice::Fixed(4));
    assert_eq!(
        KChoice::parse("2..8").unwrap(),
        KChoice::Sweep { min: 2, max: 8 }
    );
    assert_eq!(
        KChoice::parse("2..=5").unwrap(),
        KChoice::Sweep { min: 2, max: 5 }
    );
    assert_eq!(
        KChoice::parse(" 3-6 ").unwrap(),
        KChoice::Sweep { min: 3, max: 6 }
    );
    for bad in ["0", "x", "8..2", "1..65", "", "2..x"] {
        assert!(KChoice::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn defaults_are_valid_and_bad_fields_are_named() {
    let d = PhaseOptions::default();
    d.validate().unwrap();
    assert_eq!((d.l2.sets(), d.supersets()), (1024, 64));
    let check = |f: &dyn Fn(&mut PhaseOptions), what: &str| {
        let mut o = PhaseOptions::default();
        f(&mut o);
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains(what), "{what}: {e}");
    };
    check(&|o| o.interval = 15, "interval");
    check(&|o| o.k = KChoice::Fixed(0), "k");
    check(&|o| o.methods.clear(), "no method");
    check(
        &|o| o.methods = vec![Method::Wavelet, Method::Wavelet],
        "twice",
    );
    check(&|o| o.setvector_bits = 9, "setvector bits");
    check(&|o| o.activity_supersets = 48, "super-sets");
    check(&|o| o.wavelet_modulo = 8, "wavelet modulo");
    check(&|o| o.svd_rank = 17, "svd rank");
    check(&|o| o.restarts = 0, "restarts");
    check(&|o| o.max_iterations = 0, "iterations");
    check(
        &|o| {
            o.l2 = Geometry::new(3 << 16, 3, 64).unwrap();
            o.policy = Policy::Plru;
        },
        "tree",
    );
}
