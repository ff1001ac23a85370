from synthrisk.workflow import logged

with logged(snakemake):
    import datetime as dt

    import yaml

    from synthrisk.io import write_json
    from synthrisk.report.provenance import run_provenance

    config = dict(snakemake.config)
    completed = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    write_json(run_provenance(config, snakemake.params.configfiles, snakemake.params.revision, completed),
               snakemake.output.provenance)
    with open(snakemake.output.config, "w") as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
