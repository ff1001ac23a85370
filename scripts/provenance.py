from synthrisk.study.workflow import logged

with logged(snakemake):
    import datetime as dt
    import os

    import yaml

    from synthrisk.io import write_json
    from synthrisk.report.provenance import run_provenance

    config = dict(snakemake.config)
    completed = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    # The job runs in the run's directory: name it relative to the repository when it lies inside.
    here, repository = os.path.abspath("."), os.path.abspath(snakemake.params.workflow_dir)
    inside = here == repository or here.startswith(repository + os.sep)
    run_directory = os.path.relpath(here, repository) if inside else here
    write_json(run_provenance(config, snakemake.params.configfiles, snakemake.params.revision, completed,
                              run_directory), snakemake.output.provenance)
    with open(snakemake.output.config, "w") as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
