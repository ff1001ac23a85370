from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.data import split_real
    from synthrisk.io import read_table, write_table

    sizes = snakemake.params.sizes
    parts = split_real(
        read_table(snakemake.input.real),
        n_train=sizes["n_train"], n_holdout=sizes["n_holdout"], n_aux=sizes.get("n_aux", 0),
        seed=int(snakemake.wildcards.seed), stratify=sizes.get("stratify"),
        dataset=snakemake.wildcards.dataset, members=sizes.get("members", "random"),
    )
    for name, frame in parts.items():
        print(f"{name}: {len(frame)} rows")
        write_table(frame, snakemake.output[name])
